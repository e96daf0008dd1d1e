package rrdwriter

import (
	"encoding/binary"
	"fmt"
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
// which pages the update will touch, from the header it reads anyway: it
// asks the kernel for all of them at once (posix_fadvise WILLNEED, which
// only starts the reads), so they arrive in parallel and the update waits
// for about one read instead of 15. It reads exactly the pages the update
// would read: no more bytes from the disk, only sooner. A prefetch is a
// hint: any failure just leaves librrd to read the pages itself.

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

// parseLayout decodes the layout from the start of an RRD file; need >
// len(b) (and no error) when b is too short.
func parseLayout(b []byte) (l rrdLayout, need int, err error) {
	dsCnt, rraCnt, step, need, err := parseStatHead(b)
	if err != nil || need > len(b) {
		return rrdLayout{}, need, err
	}
	ds, rra := int64(dsCnt), int64(rraCnt)
	defs := int64(rrdStatHeadSize) + ds*rrdDSDefSize
	live := defs + rra*rrdRRADefSize
	l.headerLen = rrdHeaderLen(ds, rra)
	ptrs := l.headerLen - rra*rrdRRAPtrSize
	if int64(len(b)) < l.headerLen {
		return rrdLayout{}, int(l.headerLen), nil
	}
	ne := binary.NativeEndian
	l.step, l.last = int64(step), int64(ne.Uint64(b[live:]))
	l.rowLen = ds * rrdValueSize
	start := l.headerLen
	for i := range rra {
		d := b[defs+i*rrdRRADefSize:]
		r := rraLayout{start: start, rows: int64(ne.Uint64(d[24:])), pdpCnt: int64(ne.Uint64(d[32:])),
			curRow: int64(ne.Uint64(b[ptrs+i*rrdRRAPtrSize:]))}
		if r.rows <= 0 || r.pdpCnt <= 0 || r.curRow < 0 || r.curRow >= r.rows || r.rows > 1<<40/l.rowLen {
			return rrdLayout{}, 0, fmt.Errorf("%w: RRA %d has %d rows, %d steps a row, row %d", errHeaderUnknown, i, r.rows, r.pdpCnt, r.curRow)
		}
		l.rras = append(l.rras, r)
		start += r.rows * l.rowLen
	}
	return l, int(l.headerLen), nil
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
// until will touch: the header (headerLen bytes if known from the last
// time, else found out) and the rows. It returns the file's info as the
// header says and the header length for next time; ok is false (and
// librrd left to read the pages itself) if the file cannot be read or its
// layout is not one the Go reader knows.
func prefetch(path string, headerLen, until int64) (fi FileInfo, hl int64, ok bool) {
	fd, err := openHeader(path)
	if err != nil {
		return FileInfo{}, 0, false
	}
	defer unix.Close(fd)
	if headerLen <= 0 {
		headerLen = rrdHeaderRead
	}
	var l rrdLayout
	b, err := readHead(fd, path, int(headerLen), func(b []byte) (need int, err error) {
		l, need, err = parseLayout(b)
		return need, err
	})
	if err != nil {
		return FileInfo{}, 0, false
	}
	if fi, _, err = parseHeader(b); err != nil {
		return FileInfo{}, 0, false
	}
	for _, r := range l.rowRanges(until) {
		_ = unix.Fadvise(fd, r.off, r.n, unix.FADV_WILLNEED)
	}
	return fi, l.headerLen, true
}

// prefetch runs prefetch for t's file up to until and remembers what it
// learned. It does not need t.mu.
func (w *Writer) prefetch(t *target, until int64) (FileInfo, bool) {
	fi, hl, ok := prefetch(t.path, t.headerLen.Load(), until)
	if ok {
		t.headerLen.Store(hl)
		t.prefetchedUntil.Store(until)
		t.ahead.Store(&fi)
		w.c.prefetches.Add(1)
	}
	return fi, ok
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
				w.prefetch(w.target(b.Hash, b.Key), slices.Max(b.Times))
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
