//go:build cgo

package rrdwriter

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/pagecache"
	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

// TestFlushPrefetchesEveryFile: a flush of many files asks for the pages
// of every file before its update (ahead of the writers or by the writer
// itself), and with Prefetch off for none; the values land either way.
func TestFlushPrefetchesEveryFile(t *testing.T) {
	for _, on := range []bool{true, false} {
		e := newLibEnv(t, func(o *Options) { o.Prefetch, o.Writers = on, 2 })
		const files = 20
		for i := range files {
			for j := range int64(3) {
				e.putCG(fmt.Sprintf("t%02d", i), t0+300*j, uint64(300*j), 1)
			}
		}
		// A first flush creates the files; the second updates existing
		// files, the case the read-ahead is for.
		if err := e.w.FlushAll(context.Background()); err != nil {
			t.Fatal(err)
		}
		for i := range files {
			for j := int64(3); j < 6; j++ {
				e.putCG(fmt.Sprintf("t%02d", i), t0+300*j, uint64(300*j), 1)
			}
		}
		before := e.w.Stats().Prefetches
		if err := e.w.FlushAll(context.Background()); err != nil {
			t.Fatal(err)
		}
		s := e.w.Stats()
		if got := s.Prefetches - before; (on && got < files) || (!on && got != 0) {
			t.Fatalf("prefetch %v: %d files prefetched in the second flush of %d", on, got, files)
		}
		if s.EntriesWritten != 6*files || s.EntriesPending != 0 {
			t.Fatalf("prefetch %v: stats %+v", on, s)
		}
		if last, _ := testenv.RRDLastUpdate(t, e.rrdPath("t07")); last != t0+1500 {
			t.Fatalf("prefetch %v: last update %d", on, last)
		}
	}
}

// TestPrefetchSkipsACachedFile: once the writer knows a file's geometry,
// the prefetch before its next update asks for nothing while the file's
// header is in the page cache, and asks for the pages again once the
// file left the cache; the values land either way.
func TestPrefetchSkipsACachedFile(t *testing.T) {
	e := newLibEnv(t, func(o *Options) { o.Prefetch = true })
	ts := t0
	flush := func() {
		t.Helper()
		ts += 300
		e.putCG("c", ts, uint64(ts-t0), 1)
		if err := e.flush("c"); err != nil {
			t.Fatal(err)
		}
	}
	flush() // created
	flush() // the geometry read
	fd, err := unix.Open(e.rrdPath("c"), unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if !headerCached(fd) {
		t.Skip("this kernel or file system does not read with RWF_NOWAIT: every prefetch asks")
	}
	before := e.w.Stats()
	flush()
	s := e.w.Stats()
	if s.Prefetches-before.Prefetches != 1 || s.PrefetchesCached-before.PrefetchesCached != 1 {
		t.Fatalf("an update of a cached file: %d prefetches, %d of them cached; want 1 and 1", s.Prefetches-before.Prefetches, s.PrefetchesCached-before.PrefetchesCached)
	}
	// Out of the cache: a prefetch asks for the pages, one a flush.
	before = s
	flushes := flushCold(t, e, e.rrdPath("c"), flush)
	if s = e.w.Stats(); s.Prefetches-before.Prefetches != uint64(flushes) {
		t.Fatalf("updates of a file out of the cache: %d prefetches in %d flushes; want 1 a flush", s.Prefetches-before.Prefetches, flushes)
	}
	if last, _ := testenv.RRDLastUpdate(t, e.rrdPath("c")); last != ts {
		t.Fatalf("last update %d, want %d", last, ts)
	}
}

// dropCached takes the file at path out of the page cache: written back,
// then dropped until no page of it is left.
func dropCached(t *testing.T, path string) {
	t.Helper()
	if err := pagecache.DropAll(path, 1000); err != nil {
		t.Fatal(err)
	}
}

// flushCold drops the file at path from the page cache and runs flush,
// again until the flush's prefetch found the file out of the cache, and
// returns the flushes run (no headerCached to check the drop: a read with
// RWF_NOWAIT starts the page's read). On a fast disk the prefetch's own
// such read may find that read done already, and the writer rightly takes
// the file as cached then.
func flushCold(t *testing.T, e *env, path string, flush func()) int {
	t.Helper()
	for try := 1; ; try++ {
		dropCached(t, path)
		before := e.w.Stats().PrefetchesCached
		flush()
		if e.w.Stats().PrefetchesCached == before {
			return try
		}
		if try == 50 {
			testenv.Missing(t, "a file dropped from the page cache was found cached by 50 prefetches in a row (tmpfs?), or the kernel has no RWF_NOWAIT for this file system")
		}
	}
}

// readFileGeometry reads path's geometry as package rrd reads it from the
// file (rrd's tests check that against the whole header's bytes).
func readFileGeometry(t *testing.T, root *rrd.Root, path string) rrd.Geometry {
	t.Helper()
	fd, err := root.OpenHeader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	l, _, err := rrd.ReadGeometry(fd, path, false)
	if err != nil {
		t.Fatalf("read the geometry of %s: %v", path, err)
	}
	return *l
}

// TestWriterKeepsTheGeometry: after flushes of a file out of the page
// cache the writer's geometry of it is the file's (it prefetches the next
// update without reading the header); a flush that finds the file cached
// keeps none (it asks for nothing then, and 96,000 of them were 26 MB);
// after librrd refused a row it is dropped and read again. With librrd
// the prefetch opens the file for itself; natively it runs on the
// update's own descriptor.
func TestWriterKeepsTheGeometry(t *testing.T) {
	testenv.NeedRRDTool(t)
	for name, rrdOf := range map[string]func(*rrd.Root) RRD{
		"librrd": LibRRD,
		"native": func(r *rrd.Root) RRD { return NewNativeRRD(r, 16) },
	} {
		t.Run(name, func(t *testing.T) {
			testWriterKeepsTheGeometry(t, newEnvOf(t, rrdOf, func(o *Options) { o.Prefetch = true }))
		})
	}
}

func testWriterKeepsTheGeometry(t *testing.T, e *env) {
	ts := t0
	flush := func(n int) {
		t.Helper()
		for range n {
			e.putCG("k", ts, uint64(ts), 1)
			ts += 300
		}
		if err := e.w.FlushAll(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	cold := func() { t.Helper(); dropCached(t, e.rrdPath("k")) }
	// coldFlush flushes n more entries of the file out of the cache
	// (flushCold) and returns the entries flushed.
	coldFlush := func(n int) int {
		t.Helper()
		return n * flushCold(t, e, e.rrdPath("k"), func() { flush(n) })
	}
	tg := e.w.fileOf(spool.KeyHash("k"), "k")
	flush(3) // creates the file: no geometry read yet
	written := 3 + coldFlush(12)
	l := tg.geometry.Load()
	if l == nil {
		t.Fatal("no geometry kept after an update of a file out of the cache")
	}
	if fi := tg.ahead.Load(); fi != nil {
		t.Fatalf("the header the geometry's read parsed (%+v) is kept after the update: one more per file, never used", *fi)
	}
	written += coldFlush(30)
	if got, want := tg.geometry.Load(), readFileGeometry(t, e.w.o.RRD.Root(), e.rrdPath("k")); got == nil || got == l || !reflect.DeepEqual(*got, want) {
		t.Fatalf("kept geometry %+v (moved on: %v), the file's %+v", got, got != l, want)
	}
	if s := e.w.Stats(); s.EntriesWritten != uint64(written) || s.EntriesPending != 0 {
		t.Fatalf("stats %+v; want %d entries written", s, written)
	}
	// Found in the page cache: nothing asked for, no geometry kept.
	before := e.w.Stats().PrefetchesCached
	flush(1)
	if got := tg.geometry.Load(); got != nil || e.w.Stats().PrefetchesCached != before+1 {
		t.Fatalf("after a flush of the cached file: geometry %+v, %d prefetches found it cached; want none kept, 1", got, e.w.Stats().PrefetchesCached-before)
	}
	written += 1 + coldFlush(1)
	if got, want := tg.geometry.Load(), readFileGeometry(t, e.w.o.RRD.Root(), e.rrdPath("k")); got == nil || !reflect.DeepEqual(*got, want) {
		t.Fatalf("the file out of the cache again: geometry %+v, the file's %+v", got, want)
	}
	// A value librrd refuses: the rows before it land, the geometry is
	// dropped and the next update reads it again.
	e.put("k", ts, 0, gauge("c", 1.5), gauge("g", 1)) // "1.5" for a COUNTER
	ts += 300
	cold()
	flush(2)
	written += 2
	if got := tg.geometry.Load(); got != nil {
		t.Fatalf("after a refused row: geometry %+v kept", *got)
	}
	written += coldFlush(3)
	if got, want := tg.geometry.Load(), readFileGeometry(t, e.w.o.RRD.Root(), e.rrdPath("k")); got == nil || !reflect.DeepEqual(*got, want) {
		t.Fatalf("after a refused row and an update: geometry %+v, the file's %+v", got, want)
	}
	if s := e.w.Stats(); s.EntriesWritten != uint64(written) || s.EntriesPending != 0 || s.Quarantined != 1 {
		t.Fatalf("stats %+v; want %d entries written", s, written)
	}
}

// TestReadAheadKeepsANewFilesHeader: a flush's read-ahead of files its
// writer has not prefetched yet (a first flush after a start) reads each
// file's header, cached or not, and keeps it for the writer, which then
// opens the file no more before its update: one prefetch a file, and the
// values land.
func TestReadAheadKeepsANewFilesHeader(t *testing.T) {
	keys := []string{"a", "b", "c", "d"}
	// As many writers as files: the flush runs no read-ahead of its own.
	e := newLibEnv(t, func(o *Options) { o.Prefetch, o.Writers = true, len(keys) })
	batches := make([]shm.Batch, len(keys))
	for i, k := range keys {
		if err := e.w.o.RRD.Create(e.rrdPath(k), testLayout(), t0-1); err != nil {
			t.Fatal(err)
		}
		batches[i] = shm.Batch{Hash: spool.KeyHash(k), Key: k, Times: []int64{t0 + 300}}
	}
	// The read-ahead alone, allowed all of them ahead of writers that
	// take none.
	e.w.readAhead(batches, make(chan struct{}), len(batches), make(chan struct{}))
	s := e.w.Stats()
	if s.Prefetches != uint64(len(keys)) {
		t.Fatalf("the read-ahead prefetched %d files of %d", s.Prefetches, len(keys))
	}
	for _, k := range keys {
		fi := e.w.fileOf(spool.KeyHash(k), k).ahead.Load()
		if fi == nil || fi.Last != t0-1 || len(fi.DS) != len(testLayout().DS) {
			t.Fatalf("%s: header kept by the read-ahead %+v; want the file's (last update %d, %d data sources)", k, fi, t0-1, len(testLayout().DS))
		}
	}
	for _, k := range keys {
		e.putCG(k, t0+300, 300, 1)
	}
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := e.w.Stats(); s.Prefetches != uint64(len(keys)) || s.EntriesWritten != uint64(len(keys)) {
		t.Fatalf("after the flush: %d prefetches (want %d: the writers used the read-ahead's headers), %d entries written", s.Prefetches, len(keys), s.EntriesWritten)
	}
	for _, k := range keys {
		if last, _ := testenv.RRDLastUpdate(t, e.rrdPath(k)); last != t0+300 {
			t.Fatalf("%s: last update %d, want %d", k, last, t0+300)
		}
	}
}

// TestReadAheadLeavesACachedHeaderToTheUpdate: with an RRD whose update
// reads the file's info itself (NativeRRD), a first flush's read-ahead
// keeps no header of a file in the page cache: each file's update reads
// its header once, for the info and the update, and no Info call reads
// it again; nor does the update look again whether the header is cached
// (a segment's entries run past its name's time, the batch's, which the
// read-ahead prefetched up to).
func TestReadAheadLeavesACachedHeaderToTheUpdate(t *testing.T) {
	testenv.NeedRRDTool(t)
	keys := []string{"a", "b", "c", "d"}
	var n *infoCounter
	e := newEnvOf(t, func(r *rrd.Root) RRD { n = &infoCounter{NativeRRD: NewNativeRRD(r, 8)}; return n },
		func(o *Options) { o.Prefetch, o.Writers = true, len(keys) })
	defer n.Close()
	batches := make([]shm.Batch, len(keys))
	for i, k := range keys {
		if err := n.Create(e.rrdPath(k), testLayout(), t0-1); err != nil {
			t.Fatal(err)
		}
		batches[i] = shm.Batch{Hash: spool.KeyHash(k), Key: k, Times: []int64{t0 + 300}}
	}
	e.w.readAhead(batches, make(chan struct{}), len(batches), make(chan struct{}))
	if s := e.w.Stats(); s.Prefetches != uint64(len(keys)) || s.PrefetchesCached != uint64(len(keys)) {
		t.Fatalf("the read-ahead prefetched %d files, %d of them cached; want %d of each", s.Prefetches, s.PrefetchesCached, len(keys))
	}
	for _, k := range keys {
		if fi := e.w.fileOf(spool.KeyHash(k), k).ahead.Load(); fi != nil {
			t.Fatalf("%s: the read-ahead kept the header of a cached file: %+v", k, fi)
		}
		for _, ts := range []int64{t0 + 300, t0 + 600} { // one segment, named t0+300
			ent := spool.Entry{Key: k, Time: ts, Values: []spool.Value{cnt("c", uint64(ts-t0)), gauge("g", 1)}}
			ref, created, err := e.sp.Append(&ent)
			if err == nil && created {
				_, err = e.ix.Add(ref.Hash, k, ref.Time)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if planned, infos := n.planned.Load(), n.infos.Load(); planned != int32(len(keys)) || infos != 0 {
		t.Errorf("%d updates read the info, %d Info calls; want %d and 0", planned, infos, len(keys))
	}
	if s := e.w.Stats(); s.Prefetches != uint64(len(keys)) {
		t.Errorf("%d prefetches, want the read-ahead's %d only", s.Prefetches, len(keys))
	}
	for _, k := range keys {
		if last, _ := testenv.RRDLastUpdate(t, e.rrdPath(k)); last != t0+600 {
			t.Fatalf("%s: last update %d, want %d", k, last, t0+600)
		}
	}
}

// TestReadAheadRestsWhileFilesStayCached: once aheadAfterCached
// prefetches in a row found their files' headers in the page cache, the
// read-ahead opens no more files (each update checks on its own
// descriptor); the first file an update finds out of the page cache
// starts it again.
func TestReadAheadRestsWhileFilesStayCached(t *testing.T) {
	e := newLibEnv(t, func(o *Options) { o.Prefetch, o.Writers = true, 2 }) // one read-ahead goroutine: in order
	e.w.aheadAfterCached = 3
	keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	batches := make([]shm.Batch, len(keys))
	for i, k := range keys {
		if err := e.w.o.RRD.Create(e.rrdPath(k), testLayout(), t0-1); err != nil {
			t.Fatal(err)
		}
		batches[i] = shm.Batch{Hash: spool.KeyHash(k), Key: k, Times: []int64{t0 + 300}}
	}
	readAhead := func(b []shm.Batch) uint64 {
		before := e.w.Stats().Prefetches
		e.w.readAhead(b, make(chan struct{}), len(b), make(chan struct{}))
		return e.w.Stats().Prefetches - before
	}
	if n := readAhead(batches[:6]); n != 3 {
		t.Fatalf("the read-ahead prefetched %d of 6 cached files; want 3, then none", n)
	}
	// Updates of a past what the read-ahead asked for check the file
	// themselves, until one finds it out of the page cache.
	ts := t0 + 300
	flushCold(t, e, e.rrdPath("a"), func() {
		ts += 300
		e.putCG("a", ts, uint64(ts-t0), 1)
		if err := e.flush("a"); err != nil {
			t.Fatal(err)
		}
	})
	if n := readAhead(batches[6:]); n != 2 {
		t.Fatalf("after a file out of the page cache, the read-ahead prefetched %d of 2 files", n)
	}
	if last, _ := testenv.RRDLastUpdate(t, e.rrdPath("a")); last != ts {
		t.Fatalf("a: last update %d, want %d", last, ts)
	}
}
