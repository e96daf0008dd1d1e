//go:build cgo

package spoolbackend

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/rrdcached"
	"github.com/spoold/spoold/rrdwriter"
)

// TestBackendUpdateAllocatesNothingOnceWarm: once a file's header is read
// and its open segment's descriptor held, an UPDATE (the check against
// the file, the parse, the append, the index) allocates nothing but the
// amortized growth of the segment's bytes kept in memory.
func TestBackendUpdateAllocatesNothingOnceWarm(t *testing.T) {
	// The writer idle: its ticks would count in the process's allocations.
	e, b := newProtoEnvWith(t, func(o *rrdwriter.Options) { o.Tick = time.Hour }, nil)
	const runs = 1000 // within one segment (SegmentMaxEntries)
	e.mkRRD("a/x.rrd")
	ctx := context.Background()
	next := t0
	upd := make([][]string, 0, 10+runs)
	for range cap(upd) {
		next += 300
		upd = append(upd, []string{at(next, ":1:2:3:4.5")})
	}
	i := 0
	update := func() {
		if _, err := b.Update(ctx, "a/x.rrd", upd[i]); err != nil {
			t.Fatal(err)
		}
		i++
	}
	for range 10 { // the header read, the segment created, its descriptor held, buffers grown
		update()
	}
	// The segment's memory (spool/memory.go) grows its buffer by half, a
	// dozen times over these updates, and a GC may refill a sync.Pool;
	// nothing else allocates.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range runs {
		update()
	}
	runtime.ReadMemStats(&after)
	// The race detector's sync.Pool drops a quarter of what is put back,
	// on purpose: an UPDATE's few pooled buffers then cost 0.75 allocations
	// on average, so an allocation more in each would still show.
	limit := 0.05
	if testenv.Race {
		limit = 1
	}
	if allocs := float64(after.Mallocs-before.Mallocs) / runs; allocs > limit {
		t.Fatalf("an UPDATE allocates %.3f times; want the segment memory's growth only (at most %.2f)", allocs, limit)
	}
	t.Logf("%.3f allocations an UPDATE", float64(after.Mallocs-before.Mallocs)/runs)
}

// TestBackendUpdateRefusesASwappedDirectory: a directory under a file the
// backend checked once is replaced by a symlink to a directory outside
// the RRD directory holding a file of the same name: the next UPDATE is
// refused (and nothing of it spooled), not checked against the outside
// file; a directory renamed away leaves a name that is refused as missing.
func TestBackendUpdateRefusesASwappedDirectory(t *testing.T) {
	e, b := newProtoEnv(t)
	e.mkRRD("a/x.rrd")
	ctx := context.Background()
	if _, err := b.Update(ctx, "a/x.rrd", []string{at(t0+300, ":1:2:3:4")}); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	e2, _ := newProtoEnv(t)
	src := e2.mkRRD("x.rrd")
	if err := os.Rename(src, filepath.Join(outside, "x.rrd")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(e.dir, "a"), filepath.Join(e.dir, "b")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Update(ctx, "a/x.rrd", []string{at(t0+600, ":1:2:3:4")}); !errors.Is(err, rrdcached.ErrNoSuchFile) {
		t.Fatalf("update after its directory was renamed away: %v; want no such file", err)
	}
	if err := os.Symlink(outside, filepath.Join(e.dir, "a")); err != nil {
		t.Fatal(err)
	}
	n, err := b.Update(ctx, "a/x.rrd", []string{at(t0+900, ":1:2:3:4")})
	if n != 0 || err == nil || refusalOf(err) != RefusedFile {
		t.Fatalf("update through a symlinked directory = %d, %v; want refused (file)", n, err)
	}
	if p, err := b.Pending(ctx, "a/x.rrd"); err != nil || len(p) != 1 {
		t.Fatalf("pending = %v, %v; want only the first update", p, err)
	}
}
