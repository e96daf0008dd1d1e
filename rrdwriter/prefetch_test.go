//go:build cgo

package rrdwriter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/spool"
)

// TestLayoutMatchesRRDTool checks the layout the prefetch reads against the
// file librrd made: the rows end exactly at the end of the file, and each
// RRA's current row, row count and steps per row are what `rrdtool info`
// says, before and after updates that move the rows.
func TestLayoutMatchesRRDTool(t *testing.T) {
	needRRDTool(t)
	path := filepath.Join(t.TempDir(), "f.rrd")
	if err := LibRRD().Create(path, testProfile(), t0); err != nil {
		t.Fatal(err)
	}
	check := func() rrdLayout {
		t.Helper()
		l := readFileLayout(t, path)
		last := l.rras[len(l.rras)-1]
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if end := last.start + last.rows*l.rowLen; end != fi.Size() {
			t.Fatalf("rows end at %d, file has %d bytes", end, fi.Size())
		}
		info := rrdtool(t, "info", path)
		for i, r := range l.rras {
			for field, want := range map[string]int64{"cur_row": r.curRow, "rows": r.rows, "pdp_per_row": r.pdpCnt} {
				m := regexp.MustCompile(fmt.Sprintf(`(?m)^rra\[%d\]\.%s = (\d+)$`, i, field)).FindStringSubmatch(info)
				if m == nil {
					t.Fatalf("rrdtool info has no rra[%d].%s", i, field)
				}
				if got, _ := strconv.ParseInt(m[1], 10, 64); got != want {
					t.Errorf("rra[%d].%s: layout %d, rrdtool %d", i, field, want, got)
				}
			}
		}
		return l
	}
	check()
	// Five hours of 5-minute updates move every RRA up to the 2-hour one.
	for ts := t0 + 300; ts <= t0+5*3600; ts += 300 {
		rrdtool(t, "update", path, fmt.Sprintf("%d:%d:1", ts, ts))
	}
	l := check()
	if l.last != t0+5*3600 {
		t.Fatalf("last update %d, want %d", l.last, t0+5*3600)
	}
}

// TestRowRangesAreTheRowsAnUpdateWrites applies an update to a copy of a
// file and compares the bytes: every byte the update changed after the
// header lies in a range rowRanges gave for it and, until the rows wrap,
// every row it gave was written.
func TestRowRangesAreTheRowsAnUpdateWrites(t *testing.T) {
	needRRDTool(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "f.rrd")
	if err := LibRRD().Create(path, testProfile(), t0); err != nil {
		t.Fatal(err)
	}
	ts := t0
	// 650 updates wrap the 5-minute RRA (2 days), 700 overwrite it whole.
	for round, n := range []int{1, 12, 7, 30, 400, 200, 700} {
		before, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		l, _, err := parseLayout(before)
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"update", path}
		for range n {
			ts += 300
			args = append(args, fmt.Sprintf("%d:%d:%d", ts, ts*7, round))
		}
		rrdtool(t, args...)
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ranges := l.rowRanges(ts)
		for off := l.headerLen; off < int64(len(after)); off++ {
			if before[off] == after[off] {
				continue
			}
			in := false
			for _, r := range ranges {
				in = in || (off >= r.off && off < r.off+r.n)
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
			if rraAt(l, r.off).pdpCnt != 1 {
				continue
			}
			for row := r.off; row < r.off+r.n; row += l.rowLen {
				if string(before[row:row+l.rowLen]) == string(after[row:row+l.rowLen]) {
					t.Fatalf("round %d: prefetched row at %d was not written", round, row)
				}
			}
		}
	}
}

// rraAt returns the RRA whose rows hold offset off.
func rraAt(l rrdLayout, off int64) rraLayout {
	for _, r := range l.rras {
		if off >= r.start && off < r.start+r.rows*l.rowLen {
			return r
		}
	}
	return rraLayout{}
}

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
		if last, _ := lastUpdate(t, e.rrdPath("t07")); last != t0+1500 {
			t.Fatalf("prefetch %v: last update %d", on, last)
		}
	}
}

// TestProfileFileSize checks the size estimate against the file librrd
// makes for the profile: exact for the layout the Go reader knows.
func TestProfileFileSize(t *testing.T) {
	needRRDTool(t)
	path := filepath.Join(t.TempDir(), "f.rrd")
	p := testProfile()
	if err := LibRRD().Create(path, p, t0); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.fileSize(); got != fi.Size() {
		t.Fatalf("fileSize %d, librrd made %d bytes", got, fi.Size())
	}
	if fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, want 0640", fi.Mode().Perm())
	}
}

// readFileLayout reads path's whole layout from the file's bytes.
func readFileLayout(t *testing.T, path string) rrdLayout {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l, need, err := parseLayout(b)
	if err != nil || need > len(b) {
		t.Fatalf("parseLayout %s: need %d of %d, %v", path, need, len(b), err)
	}
	return l
}

// TestAdvancedLayoutIsTheFilesLayout: the layout the writer keeps instead
// of reading the header again (advanced after each update librrd
// accepted) is the layout librrd left in the file, through updates of one
// row, of a few, of more than an RRA's rows and across its wrap; and the
// prefetch's own read of it (two preads) equals the whole header's.
func TestAdvancedLayoutIsTheFilesLayout(t *testing.T) {
	needRRDTool(t)
	path := filepath.Join(t.TempDir(), "f.rrd")
	if err := LibRRD().Create(path, testProfile(), t0); err != nil {
		t.Fatal(err)
	}
	read := func() *rrdLayout {
		t.Helper()
		fd, err := openHeader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		l, fi, err := readLayout(fd, path, true)
		if err != nil {
			t.Fatal(err)
		}
		if whole := readFileLayout(t, path); !reflect.DeepEqual(*l, whole) {
			t.Fatalf("readLayout %+v, the whole header says %+v", *l, whole)
		}
		if fi.Last != l.last || len(fi.DS) != 2 {
			t.Fatalf("readLayout's info %+v, layout's last %d", fi, l.last)
		}
		return l
	}
	kept := read()
	ts := t0
	for _, n := range []int{1, 12, 7, 30, 400, 200, 700, 1, 3000} {
		rows := make([]Row, n)
		for i := range rows {
			ts += 300
			rows[i] = Row{Time: ts, Values: []string{strconv.FormatInt(ts*3, 10), "1"}}
		}
		if err := LibRRD().Update(path, nil, rows); err != nil {
			t.Fatal(err)
		}
		kept = kept.advanced(ts)
		if got := read(); !reflect.DeepEqual(kept, got) {
			t.Fatalf("after %d rows up to %d: kept layout %+v, the file's %+v", n, ts, *kept, *got)
		}
	}
}

// TestWriterKeepsTheLayout: after flushes the writer's layout of a file is
// the file's (it prefetches the next update without reading the header),
// and after librrd refused a row it is dropped and read again.
func TestWriterKeepsTheLayout(t *testing.T) {
	e := newLibEnv(t, func(o *Options) { o.Prefetch = true })
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
	tg := e.w.target(spool.KeyHash("k"), "k")
	flush(3) // creates the file: no layout read yet
	flush(12)
	l := tg.layout.Load()
	if l == nil {
		t.Fatal("no layout kept after an update")
	}
	flush(30)
	if got, want := tg.layout.Load(), readFileLayout(t, e.rrdPath("k")); got == l || !reflect.DeepEqual(*got, want) {
		t.Fatalf("kept layout %+v (moved on: %v), the file's %+v", got, got != l, want)
	}
	if s := e.w.Stats(); s.EntriesWritten != 45 || s.EntriesPending != 0 {
		t.Fatalf("stats %+v", s)
	}
	// A value librrd refuses: the rows before it land, the layout is
	// dropped and the next update reads it again.
	e.put("k", ts, 0, gauge("c", 1.5), gauge("g", 1)) // "1.5" for a COUNTER
	ts += 300
	flush(2)
	if got := tg.layout.Load(); got != nil {
		t.Fatalf("after a refused row: layout %+v kept", *got)
	}
	flush(3)
	if got, want := tg.layout.Load(), readFileLayout(t, e.rrdPath("k")); got == nil || !reflect.DeepEqual(*got, want) {
		t.Fatalf("after a refused row and an update: layout %+v, the file's %+v", got, want)
	}
	if s := e.w.Stats(); s.EntriesWritten != 50 || s.EntriesPending != 0 || s.Quarantined != 1 {
		t.Fatalf("stats %+v", s)
	}
}
