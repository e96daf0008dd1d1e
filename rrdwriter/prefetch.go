package rrdwriter

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/shm"
)

// Prefetch: librrd's update reads the pages it touches one page fault at a
// time (it maps the file with MADV_RANDOM): the header, then the rows of
// each RRA the update reaches. On a cold page cache that is about 15
// synchronous reads per file, each waiting for the disk. The writer knows
// which pages the update will touch, from the file's layout (the RRAs'
// sizes and current rows): it asks the kernel for all of them at once
// (posix_fadvise WILLNEED, which only starts the reads), so they arrive in
// parallel and the update waits for about one read instead of 15. It reads
// exactly the pages the update would read: no more bytes from the disk,
// only sooner. The layout is read from the header once (two small preads)
// and then kept, moved on by every update librrd accepts (advanced), so a
// prefetch of a known file reads nothing itself. A prefetch is a hint: any
// failure just leaves librrd to read the pages itself.

// The rest of the header after live_head_t (rrd_format.h, LP64):
//
//	pdp_prep_t  last_ds[30], 2 bytes of padding, scratch[10] unival → 112 bytes × ds_cnt
//	cdp_prep_t  scratch[10] unival                                  → 80 bytes × ds_cnt × rra_cnt
//	rra_ptr_t   cur_row unsigned long                               → 8 bytes × rra_cnt
//
// The rows follow, RRA after RRA: row_cnt × ds_cnt doubles each.
const (
	rrdPDPPrepSize = 112
	rrdCDPPrepSize = 80
	rrdRRAPtrSize  = 8
	rrdValueSize   = 8
)

// rrdHeaderLen is the length of the header of a file with ds data sources
// and rra RRAs: everything before the first row.
func rrdHeaderLen(ds, rra int64) int64 {
	return rrdStatHeadSize + ds*(rrdDSDefSize+rrdPDPPrepSize) + rra*(rrdRRADefSize+rrdRRAPtrSize+ds*rrdCDPPrepSize) + rrdLiveHeadSize
}

// rrdLayout is where an update reads and writes in an RRD file.
type rrdLayout struct {
	step, last int64 // seconds
	headerLen  int64 // everything before the first row
	rowLen     int64 // one row: ds_cnt values
	rras       []rraLayout
}

type rraLayout struct {
	start        int64 // offset of the RRA's first row
	rows, pdpCnt int64
	curRow       int64 // the row written last
}

// parseLayout decodes the layout from the start of an RRD file, the
// whole header; need > len(b) (and no error) when b is too short.
func parseLayout(b []byte) (l rrdLayout, need int, err error) {
	l, need, err = parseDefs(b)
	if err != nil || need > len(b) {
		return rrdLayout{}, need, err
	}
	if int64(len(b)) < l.headerLen {
		return rrdLayout{}, int(l.headerLen), nil
	}
	if err := l.setCurRows(b[l.ptrsOff():l.headerLen]); err != nil {
		return rrdLayout{}, 0, err
	}
	return l, int(l.headerLen), nil
}

// parseDefs decodes the layout but the current rows from the definitions
// and the live head at the start of b; need > len(b) (and no error) when b
// is too short.
func parseDefs(b []byte) (l rrdLayout, need int, err error) {
	dsCnt, rraCnt, step, need, err := parseStatHead(b)
	if err != nil || need > len(b) {
		return rrdLayout{}, need, err
	}
	ds, rra := int64(dsCnt), int64(rraCnt)
	defs := int64(rrdStatHeadSize) + ds*rrdDSDefSize
	live := defs + rra*rrdRRADefSize
	if need := live + rrdLiveHeadSize; int64(len(b)) < need {
		return rrdLayout{}, int(need), nil
	}
	ne := binary.NativeEndian
	l.headerLen = rrdHeaderLen(ds, rra)
	l.step, l.last = int64(step), int64(ne.Uint64(b[live:]))
	l.rowLen = ds * rrdValueSize
	start := l.headerLen
	for i := range rra {
		d := b[defs+i*rrdRRADefSize:]
		r := rraLayout{start: start, rows: int64(ne.Uint64(d[24:])), pdpCnt: int64(ne.Uint64(d[32:]))}
		// Bounded so that rows × row length and step × steps a row
		// (rowRanges divides by it) cannot overflow.
		if r.rows <= 0 || r.pdpCnt <= 0 || r.rows > 1<<40/l.rowLen || r.pdpCnt > math.MaxInt64/l.step {
			return rrdLayout{}, 0, fmt.Errorf("%w: RRA %d has %d rows, %d steps a row", errHeaderUnknown, i, r.rows, r.pdpCnt)
		}
		l.rras = append(l.rras, r)
		start += r.rows * l.rowLen
	}
	return l, int(live + rrdLiveHeadSize), nil
}

// ptrsOff is the offset of rra_ptr, the RRAs' current rows, at the end of
// the header.
func (l *rrdLayout) ptrsOff() int64 { return l.headerLen - int64(len(l.rras))*rrdRRAPtrSize }

// setCurRows sets the RRAs' current rows from rra_ptr (b, len(rras) × 8
// bytes).
func (l *rrdLayout) setCurRows(b []byte) error {
	for i := range l.rras {
		r := &l.rras[i]
		r.curRow = int64(binary.NativeEndian.Uint64(b[i*rrdRRAPtrSize:]))
		if r.curRow < 0 || r.curRow >= r.rows {
			return fmt.Errorf("%w: RRA %d has %d rows, current row %d", errHeaderUnknown, i, r.rows, r.curRow)
		}
	}
	return nil
}

// advanced returns the layout after an update from l.last to until (Unix
// seconds) that librrd accepted: each RRA's current row moved on by the
// rows rowRanges gives for it. The writer keeps it instead of reading the
// header again before the next update.
func (l *rrdLayout) advanced(until int64) *rrdLayout {
	n := &rrdLayout{step: l.step, last: max(l.last, until), headerLen: l.headerLen, rowLen: l.rowLen, rras: slices.Clone(l.rras)}
	for i := range n.rras {
		r := &n.rras[i]
		span := l.step * r.pdpCnt
		if k := until/span - l.last/span; k > 0 {
			r.curRow = (r.curRow + k%r.rows) % r.rows
		}
	}
	return n
}

// byteRange is a range of a file: [off, off+n).
type byteRange struct{ off, n int64 }

// rowRanges returns the byte ranges of the rows an update from the file's
// last update to until (Unix seconds) writes: for each RRA, one row for
// each of its intervals that ends in between, after its current row,
// wrapping around at its end.
func (l *rrdLayout) rowRanges(until int64) []byteRange {
	var out []byteRange
	for _, r := range l.rras {
		span := l.step * r.pdpCnt
		n := until/span - l.last/span
		if n <= 0 {
			continue
		}
		if n >= r.rows {
			out = append(out, byteRange{r.start, r.rows * l.rowLen})
			continue
		}
		first := (r.curRow + 1) % r.rows
		if first+n <= r.rows {
			out = append(out, byteRange{r.start + first*l.rowLen, n * l.rowLen})
			continue
		}
		out = append(out, byteRange{r.start + first*l.rowLen, (r.rows - first) * l.rowLen},
			byteRange{r.start, (first + n - r.rows) * l.rowLen})
	}
	return out
}

// prefetch asks the kernel to read the pages of path that an update up to
// until will touch: the header and the rows. With a known layout (the last
// one read, moved on by the updates since) it reads nothing itself;
// otherwise, or when info is asked for, it reads the definitions and the
// RRAs' current rows (two small preads; the rest of the header is asked
// for with the rows). It returns the layout it used and, with info, the
// file's info as the header says; ok is false (and librrd left to read the
// pages itself) if the file cannot be read or its layout is not one the Go
// reader knows. headerLen > 0 is the header's length as the file's profile
// gives it: asked for before the first read, so that the read of the
// current rows at the header's end finds them there or on their way (one
// wait for the disk instead of two).
func prefetch(path string, known *rrdLayout, until int64, info bool, headerLen int64) (l *rrdLayout, fi FileInfo, ok bool) {
	if known != nil && !info {
		fd, err := openNoAtime(path)
		if err != nil {
			return nil, FileInfo{}, false
		}
		adviseUpdate(fd, known, until, true)
		unix.Close(fd)
		return known, FileInfo{}, true
	}
	fd, err := openHeader(path)
	if err != nil {
		return nil, FileInfo{}, false
	}
	defer unix.Close(fd)
	if headerLen > 0 {
		_ = unix.Fadvise(fd, 0, headerLen, unix.FADV_WILLNEED)
	}
	if l, fi, err = readLayout(fd, path, info); err != nil {
		return nil, FileInfo{}, false
	}
	adviseUpdate(fd, l, until, headerLen != l.headerLen)
	return l, fi, true
}

// adviseUpdate asks for the rows an update up to until writes, and with
// header the header (posix_fadvise WILLNEED only starts the reads).
func adviseUpdate(fd int, l *rrdLayout, until int64, header bool) {
	if header {
		_ = unix.Fadvise(fd, 0, l.headerLen, unix.FADV_WILLNEED)
	}
	for _, r := range l.rowRanges(until) {
		_ = unix.Fadvise(fd, r.off, r.n, unix.FADV_WILLNEED)
	}
}

// headBufs holds the buffers of the first read of a header.
var headBufs = sync.Pool{New: func() any { b := make([]byte, rrdHeaderRead); return &b }}

// readLayout reads the layout of the file at fd from its definitions and
// rra_ptr, and with info its FileInfo.
func readLayout(fd int, path string, info bool) (*rrdLayout, FileInfo, error) {
	bp := headBufs.Get().(*[]byte)
	defer headBufs.Put(bp)
	var l rrdLayout
	b, err := readHeadInto(fd, path, *bp, func(b []byte) (need int, err error) {
		l, need, err = parseDefs(b)
		return need, err
	})
	if err != nil {
		return nil, FileInfo{}, err
	}
	var fi FileInfo
	if info {
		if fi, _, err = parseHeader(b); err != nil {
			return nil, FileInfo{}, err
		}
	}
	var small [8 * rrdRRAPtrSize]byte
	ptrs := small[:0]
	if n := len(l.rras) * rrdRRAPtrSize; n <= len(small) {
		ptrs = small[:n]
	} else {
		ptrs = make([]byte, n)
	}
	if n, err := unix.Pread(fd, ptrs, l.ptrsOff()); err != nil || n != len(ptrs) {
		return nil, FileInfo{}, fmt.Errorf("%w: read rra_ptr of %s: %d bytes, %v", errHeaderUnknown, path, n, err)
	}
	if err := l.setCurRows(ptrs); err != nil {
		return nil, FileInfo{}, err
	}
	return &l, fi, nil
}

// prefetch runs prefetch for t's file up to until and remembers what it
// learned: the layout, and with info the header's FileInfo for the file's
// writer (t.ahead). A layout whose last update is not the file's (lastKnown
// >= 0 says it; -1: not known here) is read again. It does not need t.mu.
func (w *Writer) prefetch(t *target, until, lastKnown int64, info bool) (FileInfo, bool) {
	known := t.layout.Load()
	if known != nil && lastKnown >= 0 && known.last != lastKnown {
		known = nil
	}
	read := info || known == nil
	var headerLen int64
	if p, ok := w.o.Profile(t.key); ok && read {
		headerLen = rrdHeaderLen(int64(len(p.DS)), int64(len(p.RRAs)))
	}
	l, fi, ok := prefetch(t.path, known, until, read, headerLen)
	if !ok {
		return FileInfo{}, false
	}
	if l != known {
		t.layout.Store(l)
	}
	t.prefetchedUntil.Store(until)
	if read {
		t.ahead.Store(&fi)
	}
	w.c.prefetches.Add(1)
	return fi, true
}

// advanceLayout moves t's layout on after librrd accepted an update from
// last to until (t.mu is held), or forgets it if it was not the file's as
// of last.
func (t *target) advanceLayout(last, until int64) {
	l := t.layout.Load()
	if l == nil || l.last != last {
		t.layout.CompareAndSwap(l, nil)
		return
	}
	t.layout.CompareAndSwap(l, l.advanced(until))
}

// readAhead prefetches the files of batches, in order, on its own
// goroutines, at most ahead batches before the writers (started counts
// the batches the writers took), until the batches end or stop closes.
// A file whose target has no key yet (an entry the loader indexed, not
// read yet) is left to its writer.
func (w *Writer) readAhead(batches []shm.Batch, started *atomic.Int64, ahead int, stop <-chan struct{}) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range max(w.o.Writers/2, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				b := batches[i]
				if b.Key == "" || len(b.Times) == 0 {
					continue
				}
				w.prefetch(w.target(b.Hash, b.Key), slices.Max(b.Times), -1, false)
			}
		}()
	}
	defer wg.Wait()
	defer close(next)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for i := range batches {
		for int64(i) >= started.Load()+int64(ahead) {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
		if int64(i) < started.Load() {
			continue // its writer got there first
		}
		select {
		case next <- i:
		case <-stop:
			return
		}
	}
}
