package rrdwriter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoold/spoold/internal/testing/testclock"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is a step boundary (a multiple of 300 s).
const t0 = int64(1_700_000_100)

type env struct {
	t     *testing.T
	sp    *spool.Spool
	ix    *shm.Index
	w     *Writer
	clock *testclock.Clock
	dir   string // RRD files
}

// testLayout has a COUNTER "c" and a GAUGE "g", step 300 s.
func testLayout() rrd.Layout {
	return rrd.Layout{
		Step: 300 * time.Second,
		DS: []rrd.DataSource{
			{Name: "c", Type: rrd.Counter, Heartbeat: 600 * time.Second, Min: 0, Max: nanF()},
			{Name: "g", Type: rrd.Gauge, Heartbeat: 600 * time.Second, Min: nanF(), Max: nanF()},
		},
		RRAs: rrd.DefaultRRAs(300 * time.Second),
	}
}

// newEnv is a writer of r (nil: the writer's own, LocalRRD or the
// forwarder) on a spool and index of its own.
func newEnv(t *testing.T, r RRD, edit func(*Options)) *env {
	t.Helper()
	return newEnvOf(t, func(*rrd.Root) RRD { return r }, edit)
}

// newEnvOf is newEnv of the RRD mk makes on the root of the RRD
// directory.
func newEnvOf(t *testing.T, mk func(root *rrd.Root) RRD, edit func(*Options)) *env {
	t.Helper()
	return newEnvWith(t, mk, nil, edit)
}

// newEnvWith is newEnvOf with the spool's options edited by editSpool.
func newEnvWith(t *testing.T, mk func(root *rrd.Root) RRD, editSpool func(*spool.Options), edit func(*Options)) *env {
	t.Helper()
	so := spool.DefaultOptions()
	so.Dir = filepath.Join(t.TempDir(), "spool")
	if editSpool != nil {
		editSpool(&so)
	}
	sp, err := spool.Open(so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	c := testclock.New(time.Unix(t0+3600, 0))
	io := shm.DefaultOptions()
	io.Shards, io.Now = 4, c.Now
	ix, err := shm.New(io)
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Dir = filepath.Join(t.TempDir(), "rrd")
	o.RRD, o.Now = mk(testRoot(t, o.Dir)), c.Now
	o.FutureTolerance = 1 << 62 // the test clock stands still while entries are dated ahead
	o.Layout = func(string) (rrd.Layout, bool) { return testLayout(), true }
	if edit != nil {
		edit(&o)
	}
	w, err := New(sp, ix, o)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, sp: sp, ix: ix, w: w, clock: c, dir: o.Dir}
}

// testRoot is an rrd.Root on dir (made if missing), closed when t ends.
func testRoot(t testing.TB, dir string) *rrd.Root {
	t.Helper()
	r, err := rrd.MakeRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// put writes an entry into the spool and indexes it.
func (e *env) put(key string, ts int64, flags uint8, vals ...spool.Value) spool.Ref {
	e.t.Helper()
	ent := spool.Entry{Key: key, Time: ts, Flags: flags, Values: vals}
	ref, err := e.sp.Write(&ent)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.ix.Add(ref.Hash, key, ts); err != nil {
		e.t.Fatal(err)
	}
	return ref
}

// putCG puts an entry with counter c and gauge g.
func (e *env) putCG(key string, ts int64, c uint64, g float64) spool.Ref {
	return e.put(key, ts, 0, cnt("c", c), gauge("g", g))
}

func cnt(name string, v uint64) spool.Value {
	return spool.Value{Name: name, Type: spool.Counter, Counter: v}
}
func gauge(name string, v float64) spool.Value {
	return spool.Value{Name: name, Type: spool.Gauge, Gauge: v}
}

func (e *env) exists(ref spool.Ref) bool {
	_, err := os.Stat(e.sp.EntryPath(ref))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		e.t.Fatal(err)
	}
	return err == nil
}

// quarantined returns the reasons of the quarantined files.
func (e *env) quarantined() []string {
	e.t.Helper()
	names, err := filepath.Glob(filepath.Join(e.sp.Dir(), spool.QuarantineDir, "*.reason"))
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

func (e *env) rrdPath(key string) string { return filepath.Join(e.dir, rrd.RRDPath(key)) }

// fakeRRD behaves like librrd on a map of files: rows apply in order up to
// the first rejected one.
type fakeRRD struct {
	mu      sync.Mutex
	files   map[string]*fakeFile
	calls   int
	failAll error                                // every call fails with it
	reject  func(path string, r rrd.Sample) bool // rows librrd would reject
}

type fakeFile struct {
	info rrd.FileInfo
	rows []rrd.Sample
}

func newFake() *fakeRRD { return &fakeRRD{files: make(map[string]*fakeFile)} }

// Root is nil: the fake's files are in memory.
func (f *fakeRRD) Root() *rrd.Root { return nil }

func (f *fakeRRD) Create(path string, p rrd.Layout, start int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failAll != nil {
		return f.failAll
	}
	if _, ok := f.files[path]; ok {
		return fmt.Errorf("create rrd %s: %w", path, fs.ErrExist)
	}
	fi := rrd.FileInfo{Last: start, Step: p.Step}
	for _, ds := range p.DS {
		fi.DS = append(fi.DS, rrd.DSInfo{Name: ds.Name, Type: ds.Type})
	}
	f.files[path] = &fakeFile{info: fi}
	return nil
}

func (f *fakeRRD) Info(path string) (rrd.FileInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failAll != nil {
		return rrd.FileInfo{}, f.failAll
	}
	ff, ok := f.files[path]
	if !ok {
		return rrd.FileInfo{}, fmt.Errorf("read rrd info %s: %w", path, fs.ErrNotExist)
	}
	return ff.info, nil
}

func (f *fakeRRD) Update(path string, template []string, rows []rrd.Sample, _ func(fd int)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.failAll != nil {
		return f.failAll
	}
	ff := f.files[path]
	for _, r := range rows {
		if r.Time < ff.info.Last || r.Time == ff.info.Last && r.Milli <= ff.info.LastMilli {
			return fmt.Errorf("%s: illegal attempt to update using time %d when last update time is %d (minimum one second step)", path, r.Time, ff.info.Last)
		}
		if f.reject != nil && f.reject(path, r) {
			return fmt.Errorf("%s: not a simple unsigned integer: '%s'", path, r.Values[0])
		}
		ff.rows = append(ff.rows, rrd.Sample{Time: r.Time, Milli: r.Milli, Values: append([]string(nil), r.Values...)})
		ff.info.Last, ff.info.LastMilli = r.Time, r.Milli
	}
	return nil
}

func (f *fakeRRD) rows(path string) []rrd.Sample {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ff := f.files[path]; ff != nil {
		return append([]rrd.Sample(nil), ff.rows...)
	}
	return nil
}

func (f *fakeRRD) setFail(err error) {
	f.mu.Lock()
	f.failAll = err
	f.mu.Unlock()
}

func (f *fakeRRD) updateCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func nanF() float64 { return math.NaN() }

// flush is FlushKey of key, then the removal of the segments it applied,
// which FlushKey leaves to the removal queue.
func (e *env) flush(key string) error {
	err := e.w.FlushKey(context.Background(), key)
	e.w.WaitRemovals()
	return err
}
