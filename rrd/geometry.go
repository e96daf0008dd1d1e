package rrd

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/spoold/spoold/internal/fileutil"
)

// Geometry is where an update reads and writes in an RRD file.
type Geometry struct {
	Step, Last int64 // seconds
	HeaderLen  int64 // everything before the first row
	RowLen     int64 // one row: ds_cnt values
	RRAs       []RRAGeometry
}

// RRAGeometry is where an RRA's rows are.
type RRAGeometry struct {
	Start        int64 // offset of the RRA's first row
	Rows, PDPCnt int64 // rows, and steps a row
	CurRow       int64 // the row written last
}

// parseGeometry decodes the geometry from the start of an RRD file, the
// whole header; need > len(b) (and no error) when b is too short.
func parseGeometry(b []byte) (l Geometry, need int, err error) {
	l, need, err = parseDefs(b)
	if err != nil || need > len(b) {
		return Geometry{}, need, err
	}
	if int64(len(b)) < l.HeaderLen {
		return Geometry{}, int(l.HeaderLen), nil
	}
	if err := l.setCurRows(b[l.ptrsOff():l.HeaderLen]); err != nil {
		return Geometry{}, 0, err
	}
	return l, int(l.HeaderLen), nil
}

// parseDefs decodes the geometry but the current rows from the definitions
// and the live head at the start of b; need > len(b) (and no error) when b
// is too short.
func parseDefs(b []byte) (l Geometry, need int, err error) {
	h, need, err := readHeaders.parse(b)
	if err != nil || h == nil {
		return Geometry{}, need, err
	}
	if need = int(h.liveOff + liveHeadSize); len(b) < need {
		return Geometry{}, need, nil
	}
	l.HeaderLen = h.headerLen
	l.Step, l.Last = int64(h.Step), int64(ne.Uint64(b[h.liveOff:]))
	l.RowLen = int64(len(h.DS)) * valueSize
	for i, ra := range h.RRA {
		r := RRAGeometry{Start: h.rraStart[i], Rows: int64(ra.Rows), PDPCnt: int64(ra.PDPs)}
		// Bounded so that rows × row length and step × steps a row
		// (RowRanges divides by it) cannot overflow.
		if r.Rows <= 0 || r.PDPCnt <= 0 || r.Rows > 1<<40/l.RowLen || r.PDPCnt > math.MaxInt64/l.Step {
			return Geometry{}, 0, fmt.Errorf("%w: RRA %d has %d rows, %d steps a row", ErrHeaderUnknown, i, r.Rows, r.PDPCnt)
		}
		l.RRAs = append(l.RRAs, r)
	}
	return l, need, nil
}

// ptrsOff is the offset of rra_ptr, the RRAs' current rows, at the end of
// the header.
func (l *Geometry) ptrsOff() int64 { return l.HeaderLen - int64(len(l.RRAs))*rraPtrSize }

// setCurRows sets the RRAs' current rows from rra_ptr (b, len(rras) × 8
// bytes).
func (l *Geometry) setCurRows(b []byte) error {
	for i := range l.RRAs {
		r := &l.RRAs[i]
		r.CurRow = int64(ne.Uint64(b[i*rraPtrSize:]))
		if r.CurRow < 0 || r.CurRow >= r.Rows {
			return fmt.Errorf("%w: RRA %d has %d rows, current row %d", ErrHeaderUnknown, i, r.Rows, r.CurRow)
		}
	}
	return nil
}

// Advanced returns the geometry after an update from l.Last to until (Unix
// seconds) that librrd accepted: each RRA's current row moved on by the
// rows RowRanges gives for it. The writer keeps it instead of reading the
// header again before the next update.
func (l *Geometry) Advanced(until int64) *Geometry {
	n := &Geometry{Step: l.Step, Last: max(l.Last, until), HeaderLen: l.HeaderLen, RowLen: l.RowLen, RRAs: slices.Clone(l.RRAs)}
	for i := range n.RRAs {
		r := &n.RRAs[i]
		span := l.Step * r.PDPCnt
		if k := until/span - l.Last/span; k > 0 {
			r.CurRow = (r.CurRow + k%r.Rows) % r.Rows
		}
	}
	return n
}

// ByteRange is a range of a file: [Off, Off+N).
type ByteRange struct{ Off, N int64 }

// RowRanges returns the byte ranges of the rows an update from the file's
// last update to until (Unix seconds) writes: for each RRA, one row for
// each of its intervals that ends in between, after its current row,
// wrapping around at its end.
func (l *Geometry) RowRanges(until int64) []ByteRange {
	var out []ByteRange
	for _, r := range l.RRAs {
		span := l.Step * r.PDPCnt
		n := until/span - l.Last/span
		if n <= 0 {
			continue
		}
		if n >= r.Rows {
			out = append(out, ByteRange{r.Start, r.Rows * l.RowLen})
			continue
		}
		first := (r.CurRow + 1) % r.Rows
		if first+n <= r.Rows {
			out = append(out, ByteRange{r.Start + first*l.RowLen, n * l.RowLen})
			continue
		}
		out = append(out, ByteRange{r.Start + first*l.RowLen, (r.Rows - first) * l.RowLen},
			ByteRange{r.Start, (first + n - r.Rows) * l.RowLen})
	}
	return out
}

// headBufs holds the buffers of the first read of a header.
var headBufs = sync.Pool{New: func() any { b := make([]byte, rrdHeaderRead); return &b }}

// ReadGeometry reads the geometry of the file at fd (OpenHeader opened it) from its definitions and
// rra_ptr, and with info its FileInfo.
func ReadGeometry(fd int, path string, info bool) (*Geometry, FileInfo, error) {
	bp := headBufs.Get().(*[]byte)
	defer headBufs.Put(bp)
	var l Geometry
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
	var small [8 * rraPtrSize]byte
	ptrs := small[:0]
	if n := len(l.RRAs) * rraPtrSize; n <= len(small) {
		ptrs = small[:n]
	} else {
		ptrs = make([]byte, n)
	}
	if n, err := fileutil.PreadFull(fd, ptrs, l.ptrsOff()); err != nil || n != len(ptrs) {
		return nil, FileInfo{}, fmt.Errorf("%w: read rra_ptr of %s: %d bytes, %v", ErrHeaderUnknown, path, n, err)
	}
	if err := l.setCurRows(ptrs); err != nil {
		return nil, FileInfo{}, err
	}
	return &l, fi, nil
}
