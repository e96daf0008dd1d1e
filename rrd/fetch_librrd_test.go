//go:build cgo

package rrd

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// newTestFile creates a file of testLayout, not updated since t0, for a
// test that reads it with rrdtool too.
func newTestFile(t *testing.T) (Layout, string) {
	t.Helper()
	testenv.NeedRRDTool(t)
	p := testLayout()
	path := filepath.Join(t.TempDir(), "r.rrd")
	if err := pathCreate(path, p, t0); err != nil {
		t.Fatal(err)
	}
	return p, path
}

// TestFetchRowsMatchesLibrrd compares the estimate of rows with what
// `rrdtool fetch` returns at its finest resolution, the most rows librrd
// fetches for a DEF.
func TestFetchRowsMatchesLibrrd(t *testing.T) {
	p, path := newTestFile(t)
	rras, err := pathReadRRAs(path)
	if err != nil || len(rras) != 8 || rras[1].Rows != 700 || rras[1].PDPs != 6 {
		t.Fatalf("readRRAs: %+v, %v", rras, err)
	}
	for _, span := range []time.Duration{time.Hour, 24 * time.Hour, 7 * 24 * time.Hour, 366 * 24 * time.Hour, 20 * 366 * 24 * time.Hour} {
		t.Run(span.String(), func(t *testing.T) {
			start := t0 - int64(span/time.Second)
			out := testenv.RRDTool(t, "fetch", path, "AVERAGE", "-s", fmt.Sprint(start), "-e", fmt.Sprint(t0))
			rows := int64(strings.Count(out, "\n") - 2) // header, blank line
			got := FetchRows(rras, "AVERAGE", p.Step, t0, start, t0)
			if got < rows || got > rows+2 {
				t.Errorf("FetchRows = %d, rrdtool fetch gave %d rows", got, rows)
			}
		})
	}
}

// TestFetchReturnsLibrrdsRows: Fetch returns the rows `rrdtool fetch`
// prints, (End - Start) / Step of them from Start + Step, each unknown in
// a file not updated yet: none read beyond librrd's answer.
func TestFetchReturnsLibrrdsRows(t *testing.T) {
	p, path := newTestFile(t)
	start, end := time.Unix(t0-3600, 0), time.Unix(t0+3600, 0)
	f, err := pathFetch(path, "AVERAGE", start, end, p.Step)
	if err != nil {
		t.Fatal(err)
	}
	out := testenv.RRDTool(t, "fetch", path, "AVERAGE", "-r", fmt.Sprint(int(p.Step/time.Second)), "-s", fmt.Sprint(start.Unix()), "-e", fmt.Sprint(end.Unix()))
	rows := strings.Count(out, "\n") - 2 // header, blank line
	if want := int(f.End.Sub(f.Start) / f.Step); len(f.Values) != want*len(f.DS) || want != rows {
		t.Errorf("Fetch gave %d values of %d data sources, want %d rows as rrdtool fetch prints %d", len(f.Values), len(f.DS), want, rows)
	}
	for i, v := range f.Values {
		if !math.IsNaN(v) {
			t.Fatalf("value %d of a file not updated is %v, want unknown", i, v)
		}
	}
}
