//go:build cgo

package rrd

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// TestFetchRowsMatchesLibrrd compares the estimate of rows with what
// `rrdtool fetch` returns at its finest resolution, the most rows librrd
// fetches for a DEF.
func TestFetchRowsMatchesLibrrd(t *testing.T) {
	testenv.NeedRRDTool(t)
	p := testLayout()
	path := filepath.Join(t.TempDir(), "r.rrd")
	if err := Create(path, p, t0); err != nil {
		t.Fatal(err)
	}
	rras, err := ReadRRAs(path)
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
