package loader

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

// The benchmark spool: benchEntries entries over benchKeys keys, levels 1:2.
// It is built once per process in a temp dir (about a minute: one mknod(2)
// per entry, the loader never opens them) and removed at exit, unless
// SPOOLD_LOADER_BENCH_DIR names a directory to build it in once and reuse.
const (
	benchEntries = 1_000_000
	benchKeys    = 100_000
	benchLevels  = "1:2"
)

// newBenchIndexer returns the index the benchmark loads into: the daemon's
// own shm.Index with its default capacity (64 MiB holds this spool).
func newBenchIndexer() Indexer {
	ix, err := shm.New(shm.DefaultOptions())
	if err != nil {
		panic(err)
	}
	return ix
}

var benchSpool struct {
	once sync.Once
	sp   *spool.Spool
	base string // removed at exit when not kept
	err  error
}

// openBenchSpool builds (once) and opens the benchmark spool.
func openBenchSpool(b *testing.B) *spool.Spool {
	b.Helper()
	benchSpool.once.Do(func() {
		base := os.Getenv("SPOOLD_LOADER_BENCH_DIR")
		if base == "" {
			base, benchSpool.err = os.MkdirTemp("", "spoold-loader-bench-")
			benchSpool.base = base
		}
		if benchSpool.err == nil {
			benchSpool.sp, benchSpool.err = buildBenchSpool(base)
		}
	})
	if benchSpool.err != nil {
		b.Fatal(benchSpool.err)
	}
	return benchSpool.sp
}

// removeBenchSpool closes and removes a benchmark spool built in a temp dir.
func removeBenchSpool() {
	if benchSpool.sp != nil {
		benchSpool.sp.Close()
	}
	if benchSpool.base != "" {
		os.RemoveAll(benchSpool.base)
	}
}

// buildBenchSpool creates the entries in base/spool unless base/complete
// says an earlier run did.
func buildBenchSpool(base string) (*spool.Spool, error) {
	sp, err := spool.Open(spool.Options{Dir: filepath.Join(base, "spool"), Levels: benchLevels})
	if err != nil {
		return nil, err
	}
	marker := filepath.Join(base, fmt.Sprintf("complete-%d", benchEntries))
	if _, err := os.Stat(marker); err == nil {
		return sp, nil
	}
	if err := createBenchEntries(sp); err != nil {
		sp.Close()
		return nil, err
	}
	unix.Sync() // write back now, not during the measurement
	return sp, os.WriteFile(marker, nil, 0o640)
}

// createBenchEntries makes the level directories, then the entries as empty
// files with mknod(2), in parallel (the disk's latency dominates).
func createBenchEntries(sp *spool.Spool) error {
	for leaf := 0; leaf < sp.Levels().LeafDirs(); leaf++ {
		dir := filepath.Join(sp.Dir(), sp.Levels().Dir(uint64(leaf)))
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return err
		}
	}
	const workers = 16
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			var err error
			for k := w; k < benchKeys && err == nil; k += workers {
				hash := spool.KeyHash(fmt.Sprintf("device-%d/ifTable", k))
				for j := 0; j < benchEntries/benchKeys && err == nil; j++ {
					ref := spool.Ref{Hash: hash, Time: 1_700_000_000 + 300*int64(j)}
					err = unix.Mknod(sp.EntryPath(ref), unix.S_IFREG|0o640, 0)
				}
			}
			errs <- err
		}()
	}
	var first error
	for range workers {
		if err := <-errs; err != nil && first == nil {
			first = fmt.Errorf("create benchmark entry: %w", err)
		}
	}
	return first
}

// readdirWalk counts the entries of the leaf directories with
// os.File.Readdirnames, names only: the peer the loader is compared with.
func readdirWalk(dir string, depth, levels int) (int, error) {
	f, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil || depth == levels {
		return len(names), err
	}
	n := 0
	for _, name := range names {
		if len(name) > 2 { // lock, tmp, quarantine
			continue
		}
		m, err := readdirWalk(filepath.Join(dir, name), depth+1, levels)
		if err != nil {
			return n, err
		}
		n += m
	}
	return n, nil
}

// timedReaddirWalk returns the best entries/s of a few Readdirnames walks
// (the first also warms the page cache).
func timedReaddirWalk(b *testing.B, sp *spool.Spool) float64 {
	best := 0.0
	for range 3 {
		start := time.Now()
		n, err := readdirWalk(sp.Dir(), 0, sp.Levels().Depth())
		if err != nil {
			b.Fatal(err)
		}
		if n != benchEntries {
			b.Fatalf("readdir walk found %d entries, want %d", n, benchEntries)
		}
		best = max(best, float64(n)/time.Since(start).Seconds())
	}
	return best
}

// BenchmarkLoader measures an unthrottled walk (page cache warm) of a spool
// of 1,000,000 entries into an index, against a plain Readdirnames walk of
// the same tree: with the benchmark's index (index=map) and with an index
// that does nothing (index=none: the walk's own ceiling). One op is one
// whole walk; -benchtime 1x is enough.
func BenchmarkLoader(b *testing.B) {
	sp := openBenchSpool(b)
	plainRate := timedReaddirWalk(b, sp)
	b.Run("index=shm", func(b *testing.B) { benchLoader(b, sp, plainRate, newBenchIndexer) })
	b.Run("index=none", func(b *testing.B) { benchLoader(b, sp, plainRate, func() Indexer { return nopIndexer{} }) })
}

// nopIndexer adds everything and keeps nothing.
type nopIndexer struct{}

func (nopIndexer) Add(uint64, string, int64) (bool, error) { return true, nil }
func (nopIndexer) Full(error) bool                         { return false }

func benchLoader(b *testing.B, sp *spool.Spool, plainRate float64, newIndexer func() Indexer) {
	opts := DefaultOptions()
	opts.Params.Sleep = 0
	var elapsed time.Duration
	var files uint64
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		l, err := New(sp, newIndexer(), opts)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		st, err := l.Run(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if st.Indexed != benchEntries || st.Sleeps != 0 {
			b.Fatalf("indexed %d, sleeps %d; want %d, 0", st.Indexed, st.Sleeps, benchEntries)
		}
		elapsed += st.Finished.Sub(st.Started)
		files += st.Files
	}
	rate := float64(files) / elapsed.Seconds()
	b.ReportMetric(rate, "entries/s")
	b.ReportMetric(rate/plainRate, "x-readdir")
	b.ReportMetric(plainRate, "readdir-entries/s")
}
