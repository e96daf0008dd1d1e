//go:build cgo

package rrd

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// TestGeometryMatchesRRDTool checks the geometry the prefetch reads against the
// file librrd made: the rows end exactly at the end of the file, and each
// RRA's current row, row count and steps per row are what `rrdtool info`
// says, before and after updates that move the rows.
func TestGeometryMatchesRRDTool(t *testing.T) {
	testenv.NeedRRDTool(t)
	path := filepath.Join(t.TempDir(), "f.rrd")
	if err := pathCreate(path, testLayout(), t0); err != nil {
		t.Fatal(err)
	}
	check := func() Geometry {
		t.Helper()
		l := readFileGeometry(t, path)
		last := l.RRAs[len(l.RRAs)-1]
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if end := last.Start + last.Rows*l.RowLen; end != fi.Size() {
			t.Fatalf("rows end at %d, file has %d bytes", end, fi.Size())
		}
		info := testenv.RRDTool(t, "info", path)
		for i, r := range l.RRAs {
			for field, want := range map[string]int64{"cur_row": l.CurRows[i], "rows": r.Rows, "pdp_per_row": r.PDPCnt} {
				m := regexp.MustCompile(fmt.Sprintf(`(?m)^rra\[%d\]\.%s = (\d+)$`, i, field)).FindStringSubmatch(info)
				if m == nil {
					t.Fatalf("rrdtool info has no rra[%d].%s", i, field)
				}
				if got, _ := strconv.ParseInt(m[1], 10, 64); got != want {
					t.Errorf("rra[%d].%s: geometry %d, rrdtool %d", i, field, want, got)
				}
			}
		}
		return l
	}
	check()
	// Five hours of 5-minute updates move every RRA up to the 2-hour one.
	for ts := t0 + 300; ts <= t0+5*3600; ts += 300 {
		testenv.RRDTool(t, "update", path, fmt.Sprintf("%d:%d:1", ts, ts))
	}
	l := check()
	if l.Last != t0+5*3600 {
		t.Fatalf("last update %d, want %d", l.Last, t0+5*3600)
	}
}

// TestRowRangesAreTheRowsAnUpdateWrites applies an update to a copy of a
// file and compares the bytes: every byte the update changed after the
// header lies in a range rowRanges gave for it and, until the rows wrap,
// every row it gave was written.
func TestRowRangesAreTheRowsAnUpdateWrites(t *testing.T) {
	testenv.NeedRRDTool(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "f.rrd")
	if err := pathCreate(path, testLayout(), t0); err != nil {
		t.Fatal(err)
	}
	ts := t0
	// 650 updates wrap the 5-minute RRA (2 days), 700 overwrite it whole.
	for round, n := range []int{1, 12, 7, 30, 400, 200, 700} {
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		l, _, err := parseGeometry(before)
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"update", path}
		for range n {
			ts += 300
			args = append(args, fmt.Sprintf("%d:%d:%d", ts, ts*7, round))
		}
		testenv.RRDTool(t, args...)
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ranges := l.RowRanges(ts)
		for off := l.HeaderLen; off < int64(len(after)); off++ {
			if before[off] == after[off] {
				continue
			}
			in := false
			for _, r := range ranges {
				in = in || (off >= r.Off && off < r.Off+r.N)
			}
			if !in {
				t.Fatalf("round %d (%d updates): byte %d changed outside the prefetched ranges %v", round, n, off, ranges)
			}
		}
		if len(ranges) == 0 {
			t.Fatalf("round %d: no ranges for %d updates", round, n)
		}
		if round >= 4 { // rows written before may get the same values again
			continue
		}
		// Before any wrap every row of the 5-minute RRAs held NaN and gets
		// a value: each prefetched row there must have changed, or the
		// prefetch reads more than the update. (A longer RRA may write a
		// NaN row over a NaN row: too few known steps for its xff.)
		for _, r := range ranges {
			if rraAt(l, r.Off).PDPCnt != 1 {
				continue
			}
			for row := r.Off; row < r.Off+r.N; row += l.RowLen {
				if string(before[row:row+l.RowLen]) == string(after[row:row+l.RowLen]) {
					t.Fatalf("round %d: prefetched row at %d was not written", round, row)
				}
			}
		}
	}
}

// rraAt returns the RRA whose rows hold offset off.
func rraAt(l Geometry, off int64) RRAGeometry {
	for _, r := range l.RRAs {
		if off >= r.Start && off < r.Start+r.Rows*l.RowLen {
			return r
		}
	}
	return RRAGeometry{}
}

// TestAdvancedGeometryIsTheFilesGeometry: the geometry a writer keeps instead
// of reading the header again (advanced after each update librrd
// accepted) is the geometry librrd left in the file, through updates of one
// row, of a few, of more than an RRA's rows and across its wrap; and the
// prefetch's own read of it (two preads) equals the whole header's.
func TestAdvancedGeometryIsTheFilesGeometry(t *testing.T) {
	testenv.NeedRRDTool(t)
	path := filepath.Join(t.TempDir(), "f.rrd")
	if err := pathCreate(path, testLayout(), t0); err != nil {
		t.Fatal(err)
	}
	read := func() *Geometry {
		t.Helper()
		fd, err := pathOpenHeader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		l, fi, err := ReadGeometry(fd, path, true)
		if err != nil {
			t.Fatal(err)
		}
		if whole := readFileGeometry(t, path); !reflect.DeepEqual(*l, whole) {
			t.Fatalf("ReadGeometry %+v, the whole header says %+v", *l, whole)
		}
		if fi.Last != l.Last || len(fi.DS) != 2 {
			t.Fatalf("ReadGeometry's info %+v, geometry's last %d", fi, l.Last)
		}
		return l
	}
	kept := read()
	ts := t0
	for _, n := range []int{1, 12, 7, 30, 400, 200, 700, 1, 3000} {
		rows := make([]Sample, n)
		for i := range rows {
			ts += 300
			rows[i] = Sample{Time: ts, Values: []string{strconv.FormatInt(ts*3, 10), "1"}}
		}
		if err := pathUpdate(path, nil, rows); err != nil {
			t.Fatal(err)
		}
		kept = kept.Advanced(ts)
		got := read()
		if !reflect.DeepEqual(kept, got) {
			t.Fatalf("after %d rows up to %d: kept geometry %+v, the file's %+v", n, ts, *kept, *got)
		}
		if kept.Archives != got.Archives {
			t.Fatalf("after %d rows: the file's archives read again are a copy of the ones kept, not the same", n)
		}
	}
}
