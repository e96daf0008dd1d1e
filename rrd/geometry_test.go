package rrd

import (
	"encoding/binary"
	"reflect"
	"runtime"
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
		if len(l.CurRows) != len(l.RRAs) {
			t.Fatalf("%d current rows for %d RRAs", len(l.CurRows), len(l.RRAs))
		}
		for i, r := range l.RRAs {
			if r.Start != end || l.CurRows[i] < 0 || l.CurRows[i] >= r.Rows {
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
			n := l.Advanced(u)
			for i, r := range n.RRAs {
				if n.CurRows[i] < 0 || n.CurRows[i] >= r.Rows {
					t.Fatalf("after an update to %d RRA %d's current row is %d of %d", u, i, n.CurRows[i], r.Rows)
				}
			}
		}
	})
}

// TestGeometriesShareArchives: the geometries of files of one set of
// definitions share their archives (a fleet's files keep one each), their
// current rows and last updates their own; other definitions get other
// archives, and past maxArchives sets a file's are its own, not kept.
func TestGeometriesShareArchives(t *testing.T) {
	rras := [][3]uint64{{600, 1, 5}, {700, 6, 699}, {797, 288, 0}}
	parse := func(last int64, rras [][3]uint64) Geometry {
		t.Helper()
		l, _, err := parseGeometry(synthGeometry(2, 300, last, rras))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	a, b := parse(1_700_000_000, rras), parse(1_700_000_300, [][3]uint64{{600, 1, 7}, {700, 6, 1}, {797, 288, 796}})
	if a.Archives != b.Archives {
		t.Fatalf("two files of the same definitions have archives %p and %p", a.Archives, b.Archives)
	}
	if a.Last == b.Last || a.CurRows[0] != 5 || b.CurRows[0] != 7 || b.CurRows[2] != 796 {
		t.Fatalf("last updates %d, %d, current rows %v, %v: not the files' own", a.Last, b.Last, a.CurRows, b.CurRows)
	}
	if c := parse(1_700_000_000, [][3]uint64{{600, 1, 5}, {700, 6, 699}, {798, 288, 0}}); c.Archives == a.Archives || c.RRAs[2].Rows != 798 {
		t.Fatalf("a file of other definitions has archives %+v, the first's %+v", *c.Archives, *a.Archives)
	}

	var in archivesIntern
	for i := range maxArchives + 2 {
		x := Archives{Step: int64(i + 1), HeaderLen: 100, RowLen: 8, RRAs: []RRAGeometry{{Start: 100, Rows: 10, PDPCnt: 1}}}
		first, again := in.intern(&x), in.intern(&x)
		if kept := i < maxArchives; (first == again) != kept || !reflect.DeepEqual(*first, x) {
			t.Fatalf("archives %d of a bound of %d: kept %v, same again %v, %+v", i, maxArchives, kept, first == again, *first)
		}
	}
	if len(in.m) != maxArchives {
		t.Fatalf("%d archives kept, bound %d", len(in.m), maxArchives)
	}
}

// TestGeometryHeapPerFile: the writer keeps a geometry for each file it
// finds out of the page cache, a fleet's files past the memory (2.4 million
// of the default nine archives, say): what one takes on the heap is its
// current rows and last update, not its archives' definitions again.
func TestGeometryHeapPerFile(t *testing.T) {
	rras := make([][3]uint64, 9)
	for i := range rras {
		rras[i] = [3]uint64{uint64(800 + i), uint64(1 + i), uint64(i)}
	}
	l, _, err := parseGeometry(synthGeometry(10, 30, 1_700_000_000, rras))
	if err != nil {
		t.Fatal(err)
	}
	const n = 10_000
	kept := make([]*Geometry, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range kept {
		kept[i] = l.Advanced(l.Last + int64(i)*30)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	// A Geometry (48-byte size class) and nine current rows (80).
	if per := (after.HeapAlloc - before.HeapAlloc) / n; per > 128 {
		t.Errorf("%d bytes of heap a kept geometry of nine archives; want at most 128", per)
	}
	runtime.KeepAlive(kept)
}
