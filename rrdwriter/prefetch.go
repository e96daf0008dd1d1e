package rrdwriter

import (
	"slices"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/shm"
)

// Prefetch: librrd's update reads the pages it touches one page fault at a
// time (it maps the file with MADV_RANDOM): the header, then the rows of
// each RRA the update reaches. On a cold page cache that is about 15
// synchronous reads per file, each waiting for the disk. The writer knows
// which pages the update will touch, from the file's geometry (the RRAs'
// sizes and current rows): it asks the kernel for all of them at once
// (posix_fadvise WILLNEED, which only starts the reads), so they arrive in
// parallel and the update waits for about one read instead of 15. It reads
// exactly the pages the update would read: no more bytes from the disk,
// only sooner. The geometry is read from the header once (two small preads)
// and then kept, moved on by every update librrd accepts (rrd.Geometry.Advanced), so a
// prefetch of a known file reads nothing itself, and asks for nothing when
// the file's header is in the page cache (headerCached). Before an update
// the prefetch runs on the descriptor the update opened (RRD.Update's
// opened): no open of the file for a check that, for a cached file, is
// one preadv2; the flush's read-ahead, ahead of the updates, opens the
// files itself. A prefetch is a hint: any failure just leaves librrd to
// read the pages itself.

// prefetch asks the kernel to read the pages of the file at path, open as
// fd, that an update up to until will touch: the header and the rows. A file
// whose header is in the page cache (cached: headerCached) was updated or
// read lately, and the rows its next update reaches are next to the ones
// the last one wrote: nothing is asked for, and nothing read unless info
// is asked for. Otherwise it uses the known geometry (the last one read,
// moved on by the updates since), or reads the definitions and the RRAs'
// current rows (two small preads; the rest of the header is asked for with
// the rows). It returns the geometry to keep: the one it used for a file
// not cached, nil for a cached one. read says whether it read the header,
// and fi is then the file's info as the header says (always with info).
// ok is false (and librrd left to read the pages itself) if the file
// cannot be read or its geometry is not one the Go reader knows.
// headerLen, asked for only when the header is read, is the header's
// length as the file's profile gives it, or 0: if > 0 it is asked for
// before the first read, so that the read of the current rows
// at the header's end finds them there or on their way (one wait for the
// disk instead of two).
func prefetch(fd int, path string, known *rrd.Geometry, until int64, info bool, headerLen func() int64) (l *rrd.Geometry, fi rrd.FileInfo, read, cached, ok bool) {
	cached = headerCached(fd)
	if !info {
		switch {
		case cached:
			return nil, rrd.FileInfo{}, false, true, true
		case known != nil:
			adviseUpdate(fd, known, until, true)
			return known, rrd.FileInfo{}, false, false, true
		}
	}
	// The header is read, as Root.OpenHeader's callers read it.
	if err := rrd.LockForRead(fd); err != nil {
		return nil, rrd.FileInfo{}, false, false, false
	}
	var hl int64
	if !cached {
		if hl = headerLen(); hl > 0 {
			_ = unix.Fadvise(fd, 0, hl, unix.FADV_WILLNEED)
		}
	}
	var err error
	if l, fi, err = rrd.ReadGeometry(fd, path, true); err != nil {
		return nil, rrd.FileInfo{}, false, false, false
	}
	if cached {
		return nil, fi, true, true, true
	}
	adviseUpdate(fd, l, until, hl != l.HeaderLen)
	return l, fi, true, false, true
}

// headerCached reports whether the file's first page, its header's, is
// in the page cache: a read of it that would not wait for the disk
// (preadv2 RWF_NOWAIT). A file whose header is cached was updated or read
// lately, and the rows its next update reaches are next to the ones the
// last one wrote: a prefetch asks for nothing then (the fadvise calls of
// a cached file cost more CPU than the update's own writes save), and
// the writer keeps no geometry for it. A header not cached is read
// meanwhile (the kernel starts the read a RWF_NOWAIT read would wait
// for). A kernel without RWF_NOWAIT for the file system says no.
func headerCached(fd int) bool {
	var b [1]byte
	n, err := unix.Preadv2(fd, [][]byte{b[:]}, 0, unix.RWF_NOWAIT)
	return err == nil && n == 1
}

// adviseUpdate asks for the rows an update up to until writes, and with
// header the header (posix_fadvise WILLNEED only starts the reads).
func adviseUpdate(fd int, l *rrd.Geometry, until int64, header bool) {
	if header {
		_ = unix.Fadvise(fd, 0, l.HeaderLen, unix.FADV_WILLNEED)
	}
	for _, r := range l.RowRanges(until) {
		_ = unix.Fadvise(fd, r.Off, r.N, unix.FADV_WILLNEED)
	}
}

// prefetch runs prefetch for t's file, at path, up to until (on fd, the
// file opened by the update about to run, or, if fd < 0, on a descriptor
// of its own) and remembers what it learned: the geometry of a file found cold, none
// for one found cached, and, from a header read, the header's FileInfo
// for the file's writer (t.ahead). lastKnown >= 0 is the file's last
// update as its writer knows it, before an update (a geometry whose last
// update is not that is read again, and the FileInfo is not kept); -1
// when not known here (the read-ahead, ensureFile). It does not need t.mu.
//
// Only the files found cold keep a geometry: at 96,000 files of three
// archives, all in the page cache, the geometries kept and moved on by
// every update were 26 MB of the heap, for prefetches that asked for
// nothing. A file found cached and cold at its next update has its
// geometry read then (its header's page waited for, then its rows asked
// for), and keeps it while it stays cold.
func (w *Writer) prefetch(t *fileState, path string, fd int, until, lastKnown int64, info bool) (rrd.FileInfo, bool) {
	known := t.geometry.Load()
	if known != nil && lastKnown >= 0 && known.Last != lastKnown {
		known = nil
	}
	headerLen := func() int64 {
		if p, ok := w.o.Layout(t.key); ok {
			return rrd.HeaderLen(int64(len(p.DS)), int64(len(p.RRAs)))
		}
		return 0
	}
	update := fd >= 0
	if !update {
		var err error
		if fd, err = w.o.RRD.Root().OpenNoAtime(path); err != nil {
			return rrd.FileInfo{}, false
		}
		defer unix.Close(fd)
	}
	l, fi, read, cached, ok := prefetch(fd, path, known, until, info, headerLen)
	if update && !cached {
		// The update reads no more than was asked for (RRD.Update's
		// opened gives this hint): a cached file's update needs none.
		_ = unix.Fadvise(fd, 0, 0, unix.FADV_RANDOM)
	}
	if !ok {
		return rrd.FileInfo{}, false
	}
	if cached {
		w.c.prefetchesCached.Add(1)
		w.cachedRun.Add(1)
		if !update {
			t.cachedAt.Store(until)
		}
	} else {
		w.cachedRun.Store(0)
	}
	if l != known {
		t.geometry.Store(l)
	}
	t.prefetchedUntil.Store(until)
	if read && lastKnown < 0 {
		t.ahead.Store(&fi) // for ensureFile; an update's own prefetch knows the file
	}
	w.c.prefetches.Add(1)
	return fi, true
}

// advanceGeometry moves t's geometry on after librrd accepted an update from
// last to until (t.mu is held), or forgets it if it was not the file's as
// of last.
func (t *fileState) advanceGeometry(last, until int64) {
	l := t.geometry.Load()
	if l == nil || l.Last != last {
		t.geometry.CompareAndSwap(l, nil)
		return
	}
	t.geometry.CompareAndSwap(l, l.Advanced(until))
}

// aheadAfterCached is how many prefetches in a row must find their files'
// headers in the page cache before the read-ahead stops opening files:
// the files fit in memory, and the read-ahead's open, check and close of
// each is work the update's own check on its descriptor does with one
// call. The first file an update finds out of the page cache starts the
// read-ahead again: a fleet that does not fit in memory keeps it; in one
// that mostly does, a file found out of the cache after a run of cached
// ones is read by its update without the read-ahead's head start.
const aheadAfterCached = 64

// readAhead prefetches the files of batches, in order, on its own
// goroutines, at most ahead batches before the writers (each receive from
// took is one more batch a writer took), until the batches end or stop
// closes. A file whose target has no key yet (an entry the loader indexed,
// not read yet) is left to its writer. Of a file never prefetched before
// (a first flush after a start: its writer does not know it yet) it reads
// the header even if it is cached, and keeps it for the writer's
// ensureFile, which would otherwise open the file once more to read it,
// unless the RRD's update reads the info itself (InfoUpdater): then a
// cached file's header is left to that update. While the files stay in
// the page cache (aheadAfterCached prefetches in a row found them there)
// it opens none.
func (w *Writer) readAhead(batches []shm.Batch, took <-chan struct{}, ahead int, stop <-chan struct{}) {
	_, folds := w.o.RRD.(InfoUpdater)
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(w.o.Writers/2, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				b := batches[i]
				if b.Key == "" || len(b.Times) == 0 || w.cachedRun.Load() >= w.aheadAfterCached {
					continue
				}
				t := w.fileOf(b.Hash, b.Key)
				w.prefetch(t, w.path(t), -1, slices.Max(b.Times), -1, !folds && t.prefetchedUntil.Load() == 0)
			}
		}()
	}
	defer wg.Wait()
	defer close(next)
	started := 0
	for i := range batches {
		for i >= started+ahead {
			select {
			case <-stop:
				return
			case <-took:
				started++
			}
		}
		for drained := false; !drained; {
			select {
			case <-took:
				started++
			default:
				drained = true
			}
		}
		if i < started {
			continue // its writer got there first
		}
		select {
		case next <- i:
		case <-took:
			started++
		case <-stop:
			return
		}
	}
}
