//go:build cgo

package rrd

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// TestUpdateArguments calls the update shim directly: rows with and
// without a template and milliseconds land as rrdtool reads them back,
// librrd's refusal comes back as its message with the rows before it
// applied, and a NUL byte in a value is refused before librrd is called
// (it would shift every row after it).
func TestUpdateArguments(t *testing.T) {
	testenv.NeedRRDTool(t)
	path := filepath.Join(t.TempDir(), "f.rrd")
	if err := pathCreate(path, testLayout(), t0); err != nil {
		t.Fatal(err)
	}
	// testLayout's data sources are c (COUNTER) then g (GAUGE).
	rows := []Sample{{Time: t0 + 300, Values: []string{"1.5", "100"}}, {Time: t0 + 600, Milli: 250, Values: []string{"2.5", "400"}}}
	if err := pathUpdate(path, []string{"g", "c"}, rows); err != nil {
		t.Fatal(err)
	}
	if last, vals := testenv.RRDLastUpdate(t, path); last != t0+600 || vals["c"] != "400" || vals["g"] != "2.5" {
		t.Fatalf("after the templated update: lastupdate %d %v", last, vals)
	}
	if fi, err := pathInfo(path); err != nil || fi.Last != t0+600 || fi.LastMilli != 250 {
		t.Fatalf("info %+v %v, want last %d.250", fi, err, t0+600)
	}
	err := pathUpdate(path, nil, []Sample{{Time: t0 + 900, Values: []string{"700", "3"}}, {Time: t0 + 900, Values: []string{"800", "4"}}, {Time: t0 + 1200, Values: []string{"900", "5"}}})
	if err == nil || !strings.Contains(err.Error(), librrdIllegalTime) || !strings.Contains(err.Error(), path) {
		t.Fatalf("a second row of one second: %v, want librrd's %q naming %s", err, librrdIllegalTime, path)
	}
	if last, vals := testenv.RRDLastUpdate(t, path); last != t0+900 || vals["c"] != "700" || vals["g"] != "3" {
		t.Fatalf("after the refused row: lastupdate %d %v, want the row before it", last, vals)
	}
	err = pathUpdate(path, nil, []Sample{{Time: t0 + 1200, Values: []string{"9\x0000", "5"}}, {Time: t0 + 1500, Values: []string{"1000", "6"}}})
	if err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Fatalf("a value with a NUL byte: %v, want an error", err)
	}
	if last, _ := testenv.RRDLastUpdate(t, path); last != t0+900 {
		t.Fatalf("a refused update changed the file: last %d", last)
	}
}
