package rrd

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/spoold/spoold/internal/fileutil"
)

// Geometry is where an update reads and writes in an RRD file: the
// file's archives (shared by every file of the same definitions) and each
// archive's current row as of Last. The writer keeps one for each file it
// finds out of the page cache (a fleet's files past the memory: millions),
// so only the current rows and the last update are a file's own.
type Geometry struct {
	*Archives
	Last    int64   // seconds
	CurRows []int64 // the row written last, of each of RRAs
}

// Archives is what a file's definitions fix of its geometry. Files of the
// same definitions share one (archives.intern); it is never modified.
type Archives struct {
	Step      int64 // seconds
	HeaderLen int64 // everything before the first row
	RowLen    int64 // one row: ds_cnt values
	RRAs      []RRAGeometry
}

// RRAGeometry is where an RRA's rows are.
type RRAGeometry struct {
	Start        int64 // offset of the RRA's first row
	Rows, PDPCnt int64 // rows, and steps a row
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
	a := Archives{HeaderLen: h.headerLen, Step: int64(h.Step), RowLen: int64(len(h.DS)) * valueSize}
	var small [16]RRAGeometry
	a.RRAs = small[:0]
	for i, ra := range h.RRA {
		r := RRAGeometry{Start: h.rraStart[i], Rows: int64(ra.Rows), PDPCnt: int64(ra.PDPs)}
		// Bounded so that rows × row length and step × steps a row
		// (RowRanges divides by it) cannot overflow.
		if r.Rows <= 0 || r.PDPCnt <= 0 || r.Rows > 1<<40/a.RowLen || r.PDPCnt > math.MaxInt64/a.Step {
			return Geometry{}, 0, fmt.Errorf("%w: RRA %d has %d rows, %d steps a row", ErrHeaderUnknown, i, r.Rows, r.PDPCnt)
		}
		a.RRAs = append(a.RRAs, r)
	}
	return Geometry{Archives: archives.intern(&a), Last: int64(ne.Uint64(b[h.liveOff:]))}, need, nil
}

// archives are the Archives of the files read, one for each set of
// definitions, up to maxArchives of them: past that (a spool of files made
// with ever new definitions) a file's are its own. A fleet's files come
// from a few profiles, so millions of geometries share a few of these.
var archives archivesIntern

// maxArchives bounds the Archives kept for sharing.
const maxArchives = 1024

type archivesIntern struct {
	mu sync.Mutex
	m  map[string]*Archives // by appendKey
}

// intern returns the Archives kept equal to *a, or a copy of *a (its RRAs
// may be a caller's buffer), kept if there is room.
func (in *archivesIntern) intern(a *Archives) *Archives {
	var buf [8 * (3 + 3*16)]byte
	k := a.appendKey(buf[:0])
	in.mu.Lock()
	defer in.mu.Unlock()
	if got := in.m[string(k)]; got != nil {
		return got
	}
	c := &Archives{Step: a.Step, HeaderLen: a.HeaderLen, RowLen: a.RowLen, RRAs: slices.Clone(a.RRAs)}
	if len(in.m) < maxArchives {
		if in.m == nil {
			in.m = make(map[string]*Archives)
		}
		in.m[string(k)] = c
	}
	return c
}

// appendKey appends a's fields, the key it is shared by.
func (a *Archives) appendKey(b []byte) []byte {
	b = ne.AppendUint64(b, uint64(a.Step))
	b = ne.AppendUint64(b, uint64(a.HeaderLen))
	b = ne.AppendUint64(b, uint64(a.RowLen))
	for _, r := range a.RRAs {
		b = ne.AppendUint64(b, uint64(r.Start))
		b = ne.AppendUint64(b, uint64(r.Rows))
		b = ne.AppendUint64(b, uint64(r.PDPCnt))
	}
	return b
}

// ptrsOff is the offset of rra_ptr, the RRAs' current rows, at the end of
// the header.
func (a *Archives) ptrsOff() int64 { return a.HeaderLen - int64(len(a.RRAs))*rraPtrSize }

// setCurRows sets the RRAs' current rows from rra_ptr (b, len(rras) × 8
// bytes).
func (l *Geometry) setCurRows(b []byte) error {
	l.CurRows = make([]int64, len(l.RRAs))
	for i, r := range l.RRAs {
		cur := int64(ne.Uint64(b[i*rraPtrSize:]))
		if cur < 0 || cur >= r.Rows {
			return fmt.Errorf("%w: RRA %d has %d rows, current row %d", ErrHeaderUnknown, i, r.Rows, cur)
		}
		l.CurRows[i] = cur
	}
	return nil
}

// Advanced returns the geometry after an update from l.Last to until (Unix
// seconds) that librrd accepted: each RRA's current row moved on by the
// rows RowRanges gives for it. The writer keeps it instead of reading the
// header again before the next update.
func (l *Geometry) Advanced(until int64) *Geometry {
	n := &Geometry{Archives: l.Archives, Last: max(l.Last, until), CurRows: slices.Clone(l.CurRows)}
	for i, r := range l.RRAs {
		span := l.Step * r.PDPCnt
		if k := until/span - l.Last/span; k > 0 {
			n.CurRows[i] = (l.CurRows[i] + k%r.Rows) % r.Rows
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
	for i, r := range l.RRAs {
		span := l.Step * r.PDPCnt
		n := until/span - l.Last/span
		if n <= 0 {
			continue
		}
		if n >= r.Rows {
			out = append(out, ByteRange{r.Start, r.Rows * l.RowLen})
			continue
		}
		first := (l.CurRows[i] + 1) % r.Rows
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
