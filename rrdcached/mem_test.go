package rrdcached_test

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spoold/spoold/internal/testing/rrdctest"
	"github.com/spoold/spoold/rrdcached"
)

// memBackend is the tests' Backend: updates in memory, files' existence
// and listings from the real directory, each file's last update and
// layout as the fixture's (rrdctest.Step, rrdctest.Rows). It answers as
// librrd would where it can, and says "not in memory" where only librrd
// can answer (INFO, FETCH of a file it was given no data for).
type memBackend struct {
	dir string

	mu       sync.Mutex
	fileLast map[string]float64 // the "RRD file": its last update
	cache    map[string]*memFile
	fetch    map[string]rrdcached.FetchResult
	info     map[string][]rrdcached.InfoValue
	updates  []string // every Update call's file, in order
	received uint64

	// gate, when set (hold), makes the next Update wait for it to close
	// after closing entered.
	gate, entered chan struct{}
	// fetchGate, when set, makes every Fetch wait for it to close;
	// inFetch counts those in Fetch, maxInFetch the most at once.
	fetchGate           chan struct{}
	inFetch, maxInFetch int
}

type memFile struct {
	last      float64
	pending   []string
	suspended bool
}

func newMemBackend(dir string) *memBackend {
	return &memBackend{dir: dir,
		fileLast: map[string]float64{"a.rrd": rrdctest.Begin, "sub/b.rrd": rrdctest.Begin},
		cache:    map[string]*memFile{},
		fetch:    map[string]rrdcached.FetchResult{},
		info:     map[string][]rrdcached.InfoValue{},
	}
}

func (b *memBackend) abs(file string) string { return b.dir + "/" + file }

// exists stats the file as rrdcached does before it caches one.
func (b *memBackend) exists(file string) error {
	st, err := os.Stat(filepath.Join(b.dir, file))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return rrdcached.ErrNoSuchFile
	case err != nil:
		return err
	case !st.Mode().IsRegular():
		return &rrdcached.ReplyError{Msg: "Not a regular file: " + b.abs(file)}
	}
	return nil
}

func (b *memBackend) Update(ctx context.Context, file string, updates []string) (int, error) {
	b.mu.Lock()
	gate, entered := b.gate, b.entered
	b.gate = nil
	b.mu.Unlock()
	if gate != nil {
		close(entered)
		select {
		case <-gate:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.updates = append(b.updates, file)
	b.received++
	f := b.cache[file]
	if f == nil { // stat only a file not cached yet, as rrdcached does
		if err := b.exists(file); err != nil {
			return 0, err
		}
		f = &memFile{last: b.fileLast[file]}
		b.cache[file] = f
	}
	for i, u := range updates {
		ts, _, ok := strings.Cut(u, ":")
		t, err := strconv.ParseFloat(ts, 64)
		if !ok || err != nil {
			return i, rrdcached.BadTimestamp(u)
		}
		if t <= f.last {
			return i, rrdcached.TimeNotAfter(t, f.last)
		}
		f.last = t
		f.pending = append(f.pending, u)
	}
	return len(updates), nil
}

// fetching returns the Fetch calls in progress and the most at once.
func (b *memBackend) fetching() (now, most int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inFetch, b.maxInFetch
}

// hold makes the next Update wait until gate is closed; entered is closed
// when it waits.
func (b *memBackend) hold() (gate, entered chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.gate, b.entered = make(chan struct{}), make(chan struct{})
	return b.gate, b.entered
}

// updatesSeen returns the files of every Update call so far.
func (b *memBackend) updatesSeen() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.updates...)
}

func (b *memBackend) write(file string, f *memFile) {
	if len(f.pending) > 0 {
		b.fileLast[file] = f.last
	}
	f.pending = nil
}

func (b *memBackend) Flush(_ context.Context, file string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if f := b.cache[file]; f != nil {
		b.write(file, f)
		return true, nil
	}
	return false, b.exists(file)
}

func (b *memBackend) FlushAll(context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for n, f := range b.cache {
		b.write(n, f)
	}
	return nil
}

func (b *memBackend) Pending(_ context.Context, file string) ([]string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if f := b.cache[file]; f != nil {
		return append([]string(nil), f.pending...), nil
	}
	return nil, nil
}

// Forget keeps what is pending, as spoold does: it is written, then the
// file is dropped from the cache.
func (b *memBackend) Forget(_ context.Context, file string) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.cache[file]
	if f == nil {
		return 0, rrdcached.ErrNotCached
	}
	kept := len(f.pending)
	b.write(file, f)
	delete(b.cache, file)
	return kept, nil
}

func (b *memBackend) Queue(context.Context) ([]rrdcached.Queued, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var q []rrdcached.Queued
	for n, f := range b.cache {
		if len(f.pending) > 0 {
			q = append(q, rrdcached.Queued{File: n, Pending: len(f.pending)})
		}
	}
	sort.Slice(q, func(i, j int) bool { return q[i].File < q[j].File })
	return q, nil
}

func (b *memBackend) Stats() []rrdcached.StatsValue {
	b.mu.Lock()
	defer b.mu.Unlock()
	names := []string{"QueueLength", "UpdatesReceived", "FlushesReceived", "UpdatesWritten",
		"DataSetsWritten", "TreeNodesNumber", "TreeDepth", "JournalBytes", "JournalRotate"}
	st := make([]rrdcached.StatsValue, len(names))
	for i, n := range names {
		st[i] = rrdcached.StatsValue{Name: n}
	}
	st[1].Value = b.received
	return st
}

// lastUpdate is the file's last update time as the cache or the file has it.
func (b *memBackend) lastUpdate(file string) (float64, error) {
	if err := b.exists(file); err != nil {
		return 0, err
	}
	if f := b.cache[file]; f != nil {
		return f.last, nil
	}
	if l, ok := b.fileLast[file]; ok {
		return l, nil
	}
	return 0, errors.New("not in memory")
}

func (b *memBackend) First(_ context.Context, file string, rra int) (time.Time, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.exists(file); err != nil {
		return time.Time{}, err
	}
	if rra != 0 {
		return time.Time{}, errors.New("invalid rraindex number")
	}
	last := int64(b.fileLast[file])
	return time.Unix(last-last%rrdctest.Step-(rrdctest.Rows-1)*rrdctest.Step, 0), nil
}

func (b *memBackend) Last(_ context.Context, file string) (time.Time, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l, err := b.lastUpdate(file)
	if err != nil {
		return time.Time{}, err
	}
	t := int64(l)
	return time.Unix(t-t%rrdctest.Step, 0), nil
}

func (b *memBackend) Info(_ context.Context, file string) ([]rrdcached.InfoValue, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.exists(file); err != nil {
		return nil, err
	}
	if v, ok := b.info[file]; ok {
		return v, nil
	}
	return nil, errors.New("not in memory")
}

func (b *memBackend) Create(_ context.Context, file string, args rrdcached.CreateArgs) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(args.Defs) == 0 {
		return errors.New("you must define at least one Round Robin Archive")
	}
	p := filepath.Join(b.dir, file)
	if _, err := os.Stat(p); err == nil && args.NoOverwrite {
		return errors.New("creating '" + b.abs(file) + "': File exists")
	}
	if err := os.WriteFile(p, []byte("placeholder"), 0o644); err != nil {
		return err
	}
	begin := args.Begin
	if begin.IsZero() {
		begin = time.Now().Add(-10 * time.Second)
	}
	b.fileLast[file] = float64(begin.Unix())
	return nil
}

func (b *memBackend) Fetch(ctx context.Context, file string, args rrdcached.FetchArgs) (rrdcached.FetchResult, error) {
	b.mu.Lock()
	gate := b.fetchGate
	b.inFetch++
	b.maxInFetch = max(b.maxInFetch, b.inFetch)
	b.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inFetch--
	if err := b.exists(file); err != nil {
		return rrdcached.FetchResult{}, err
	}
	if args.CF != "AVERAGE" {
		return rrdcached.FetchResult{}, errors.New("unknown consolidation function '" + args.CF + "'")
	}
	if r, ok := b.fetch[file]; ok {
		if n := int64(len(r.Rows) * len(r.DS)); args.MaxBytes > 0 && n*8 > args.MaxBytes {
			return rrdcached.FetchResult{}, &rrdcached.FetchTooLargeError{Rows: int64(len(r.Rows)), DS: int64(len(r.DS))}
		}
		return r, nil
	}
	return rrdcached.FetchResult{}, errors.New("not in memory")
}

// List lists as rrd_list_r does: a ".rrd" name is itself; a directory
// lists its subdirectories and ".rrd" files, or recursively the ".rrd"
// files below it.
func (b *memBackend) List(_ context.Context, dir string, recursive bool) ([]string, error) {
	root := filepath.Join(b.dir, dir)
	if strings.HasSuffix(dir, ".rrd") {
		st, err := os.Stat(root)
		if err != nil {
			return nil, err
		}
		if !st.Mode().IsRegular() {
			return nil, &os.PathError{Op: "list", Path: root, Err: syscall.ENXIO}
		}
		return []string{filepath.Base(dir)}, nil
	}
	var out []string
	var walk func(rel string) error
	walk = func(rel string) error {
		ents, err := os.ReadDir(filepath.Join(root, rel))
		if err != nil {
			return err
		}
		for _, e := range ents {
			name := filepath.Join(rel, e.Name())
			st, err := os.Stat(filepath.Join(root, name))
			switch {
			case err != nil:
			case st.IsDir() && recursive:
				walk(name)
			case st.Mode().IsRegular() && !strings.HasSuffix(e.Name(), ".rrd"):
			default:
				out = append(out, name)
			}
		}
		return nil
	}
	if err := walk(""); err != nil {
		return nil, err
	}
	return out, nil
}

func (b *memBackend) suspend(file string, to bool) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.cache[file]
	if f == nil {
		return false, rrdcached.ErrNotCached
	}
	changed := f.suspended != to
	f.suspended = to
	return changed, nil
}

func (b *memBackend) Suspend(file string) (bool, error) { return b.suspend(file, true) }
func (b *memBackend) Resume(file string) (bool, error)  { return b.suspend(file, false) }

func (b *memBackend) all(to bool) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, f := range b.cache {
		if f.suspended != to {
			f.suspended = to
			n++
		}
	}
	return n
}

func (b *memBackend) SuspendAll() int { return b.all(true) }
func (b *memBackend) ResumeAll() int  { return b.all(false) }

// nan is librrd's NaN (sign bit set: glibc prints it "-nan").
var nan = math.Copysign(math.NaN(), -1)

var _ rrdcached.Backend = (*memBackend)(nil)
