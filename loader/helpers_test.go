package loader

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoold/spoold/internal/testing/spooltest"
	"github.com/spoold/spoold/internal/testing/testclock"
	"github.com/spoold/spoold/spool"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(cleanupM{m})
}

// cleanupM removes the benchmark spool after the tests and benchmarks.
type cleanupM struct{ m *testing.M }

func (c cleanupM) Run() int {
	defer removeBenchSpool()
	return c.m.Run()
}

// fakeClock is a loader Clock: the wall time of a testclock.Clock, which
// Sleep advances and records, and a thread CPU time that moves only when
// told to.
type fakeClock struct {
	*testclock.Clock
	mu      sync.Mutex
	cpu     time.Duration
	sleeps  []time.Duration
	onSleep func(d time.Duration) // called before Sleep checks ctx
}

func newFakeClock() *fakeClock { return &fakeClock{Clock: testclock.New(time.Unix(1_700_000_000, 0))} }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if c.onSleep != nil {
		c.onSleep(d)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Advance(d)
	c.sleeps = append(c.sleeps, d)
	return nil
}

func (c *fakeClock) ThreadCPU() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cpu
}

// advance moves wall time by wall and thread CPU by cpu.
func (c *fakeClock) advance(wall, cpu time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Advance(wall)
	c.cpu += cpu
}

func (c *fakeClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

var errTestFull = errors.New("test index full")

// fakeIndex is a map-based Indexer with an optional capacity and a hook
// called after each Add with the number of Adds so far.
type fakeIndex struct {
	mu    sync.Mutex
	refs  map[spool.Ref]bool
	cap   int // 0 = unlimited
	adds  int
	onAdd func(n int)
	fail  func(r spool.Ref) error // an error to return for r, or nil
}

func newFakeIndex() *fakeIndex { return &fakeIndex{refs: make(map[spool.Ref]bool)} }

func (x *fakeIndex) Add(hash uint64, key string, ts int64) (bool, error) {
	x.mu.Lock()
	x.adds++
	n := x.adds
	added, err := x.add(spool.Ref{Hash: hash, Time: ts})
	x.mu.Unlock()
	if x.onAdd != nil {
		x.onAdd(n)
	}
	return added, err
}

func (x *fakeIndex) add(r spool.Ref) (bool, error) {
	if x.fail != nil {
		if err := x.fail(r); err != nil {
			return false, err
		}
	}
	if x.refs[r] {
		return false, nil
	}
	if x.cap > 0 && len(x.refs) >= x.cap {
		return false, fmt.Errorf("add %s: %w", r, errTestFull)
	}
	x.refs[r] = true
	return true, nil
}

func (x *fakeIndex) Full(err error) bool { return errors.Is(err, errTestFull) }

func (x *fakeIndex) Len() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.refs)
}

// openSpool opens a spool with the given levels in a fresh temp dir.
func openSpool(t testing.TB, levels string) *spool.Spool {
	t.Helper()
	return spooltest.Open(t, spool.Options{Levels: levels})
}

// putEntries creates n empty entry files (the loader never opens them) for
// keys dev-0..dev-n-1 at time ts, and returns their refs.
func putEntries(t testing.TB, sp *spool.Spool, n int, ts int64) []spool.Ref {
	t.Helper()
	refs := make([]spool.Ref, n)
	for i := range refs {
		refs[i] = spool.Ref{Hash: spool.KeyHash(fmt.Sprintf("dev-%d", i)), Time: ts}
		putFile(t, sp.EntryPath(refs[i]))
	}
	return refs
}

// putFile creates an empty file and its directories.
func putFile(t testing.TB, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o640); err != nil {
		t.Fatal(err)
	}
}

// regularFiles lists the regular files under dir, relative to it, without
// the .reason notes of the quarantine.
func regularFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || strings.HasSuffix(path, ".reason") {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// newTestLoader returns a loader with a fake clock and the given params.
func newTestLoader(t testing.TB, sp *spool.Spool, ix Indexer, p Params, clock Clock) *Loader {
	t.Helper()
	opts := DefaultOptions()
	opts.Params, opts.Clock = p, clock
	l, err := New(sp, ix, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// repeat returns n copies of d.
func repeat(n int, d time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = d
	}
	return out
}
