package rrd

import (
	"encoding/binary"
	"strconv"
	"testing"
)

// synthGeometry is a whole header (synthHeader's, then pdp_prep, cdp_prep
// and rra_ptr) of a file with ds COUNTERs and one RRA per {rows, steps a
// row, current row}.
func synthGeometry(ds int, step uint64, last int64, rras [][3]uint64) []byte {
	names := make([]DSInfo, ds)
	for i := range names {
		names[i] = DSInfo{Name: "d" + strconv.Itoa(i), Type: Counter}
	}
	b := synthHeader("0003", step, names, len(rras), last)
	ne := binary.NativeEndian
	for i, r := range rras {
		d := b[statHeadSize+ds*dsDefSize+i*rraDefSize:]
		ne.PutUint64(d[24:], r[0])
		ne.PutUint64(d[32:], r[1])
	}
	b = append(b, make([]byte, HeaderLen(int64(ds), int64(len(rras)))-int64(len(b)))...)
	ptrs := len(b) - len(rras)*rraPtrSize
	for i, r := range rras {
		ne.PutUint64(b[ptrs+i*rraPtrSize:], r[2])
	}
	return b
}

// FuzzParseGeometry: a header the geometry reader accepts gives RRAs whose
// rows lie back to back after the header, current rows inside them; the
// ranges an update up to any time touches lie inside the rows, and the
// geometry moved on past such an update keeps every current row inside its
// RRA. Anything else is refused as not recognized, never a panic.
func FuzzParseGeometry(f *testing.F) {
	f.Add(synthGeometry(2, 300, 1_700_000_000, [][3]uint64{{600, 1, 5}, {700, 6, 699}, {797, 288, 0}}), int64(1_700_003_600))
	f.Add(synthGeometry(1, 1<<31-1, -5, [][3]uint64{{1, 1 << 40, 0}}), int64(-1))
	f.Fuzz(func(t *testing.T, b []byte, until int64) {
		l, need, err := parseGeometry(b)
		if !accepted(t, b, need, err) {
			return
		}
		if int64(need) != l.HeaderLen || len(l.RRAs) == 0 || l.Step <= 0 || l.RowLen <= 0 {
			t.Fatalf("need %d for geometry %+v", need, l)
		}
		end := l.HeaderLen
		for i, r := range l.RRAs {
			if r.Start != end || r.CurRow < 0 || r.CurRow >= r.Rows {
				t.Fatalf("RRA %d %+v, rows of the one before end at %d", i, r, end)
			}
			end += r.Rows * l.RowLen
		}
		for _, u := range []int64{until, l.Last, l.Last + l.Step, l.Last + 1000*l.Step} {
			for _, rg := range l.RowRanges(u) {
				if rg.N <= 0 || rg.Off < l.HeaderLen || rg.Off+rg.N > end {
					t.Fatalf("range %+v for an update to %d, rows from %d to %d", rg, u, l.HeaderLen, end)
				}
			}
			for i, r := range l.Advanced(u).RRAs {
				if r.CurRow < 0 || r.CurRow >= r.Rows {
					t.Fatalf("after an update to %d RRA %d's current row is %d of %d", u, i, r.CurRow, r.Rows)
				}
			}
		}
	})
}
