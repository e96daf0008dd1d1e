package poller

import (
	"strings"
	"testing"

	"github.com/gosnmp/gosnmp"
)

func TestCompareOID(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"1.3.6", "1.3.6", 0}, {"1.3.6", "1.3.6.1", -1}, {"1.3.10", "1.3.9", 1},
		{"2", "10", -1}, {"10101", "436207616", -1}, {"1.4", "1.3.9", 1},
	} {
		if got := compareOID(tc.a, tc.b); got != tc.want || compareOID(tc.b, tc.a) != -tc.want {
			t.Errorf("compareOID(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// FuzzWalkAnswer feeds one agent answer of any names and types to a walk
// of two columns: whatever it says, each column's cells stay inside the
// column, in strictly increasing index order, and a walk that takes
// answers always ends or moves on.
func FuzzWalkAnswer(f *testing.F) {
	f.Add("1.3.6.1.2.1.2.2.1.1.1 1.3.6.1.2.1.31.1.1.1.1.1 1.3.6.1.2.1.2.2.1.1.2 1.3.6.1.2.1.31.1.1.1.1.2", uint8(2))
	f.Add("1.3.6.1.2.1.2.2.1.1.5 1.3.6.1.2.1.2.2.1.1.5", uint8(130))
	f.Add("1.3.6.1.2.1.2.2.1.1.10 1.3.6.1.2.1.2.2.1.1.9", uint8(0))
	cols := []string{"1.3.6.1.2.1.2.2.1.1", "1.3.6.1.2.1.31.1.1.1.1"}
	f.Fuzz(func(t *testing.T, names string, types uint8) {
		var vars []gosnmp.SnmpPDU
		for i, n := range strings.Fields(names) {
			typ := gosnmp.Integer
			if types>>(i%8)&1 == 1 {
				typ = gosnmp.EndOfMibView
			}
			vars = append(vars, gosnmp.SnmpPDU{Name: n, Type: typ, Value: i})
		}
		out := make([]columnWalk, len(cols))
		next := append([]string(nil), cols...)
		active := []int{0, 1}
		still, err := takeWalkAnswer(vars, cols, next, active, out, walkLimits{maxRows: 3})
		if err != nil {
			return
		}
		if len(still) == len(active) && len(vars) > 0 {
			moved := false
			for c := range cols {
				moved = moved || next[c] != cols[c]
			}
			if !moved {
				t.Fatalf("an answer taken moved no column: %v", vars)
			}
		}
		for c, w := range out {
			if len(w.cells) > 3 {
				t.Fatalf("column %d: %d cells over the limit", c, len(w.cells))
			}
			for i, cl := range w.cells {
				if !strings.HasPrefix(cl.pdu.Name, cols[c]+".") && !strings.HasPrefix(cl.pdu.Name, "."+cols[c]+".") {
					t.Fatalf("column %d took %s", c, cl.pdu.Name)
				}
				if i > 0 && compareOID(w.cells[i-1].index, cl.index) >= 0 {
					t.Fatalf("column %d: index %s after %s", c, cl.index, w.cells[i-1].index)
				}
			}
		}
	})
}

// TestRowIndexes: a table's rows are the indexes any walked column
// answers, in index order; at most the limit stay, none beyond the cells
// of a column cut at the limit.
func TestRowIndexes(t *testing.T) {
	col := func(truncated bool, idx ...string) columnWalk {
		w := columnWalk{truncated: truncated}
		for _, i := range idx {
			w.cells = append(w.cells, cell{index: i})
		}
		return w
	}
	for _, tc := range []struct {
		name      string
		walked    []columnWalk
		max       int
		want      string
		truncated bool
	}{
		{"no index column", []columnWalk{col(false), col(false, "1", "2", "10"), col(false, "2", "10")}, 100, "1 2 10", false},
		{"columns of other rows", []columnWalk{col(false, "10101", "4194304"), col(false, "1", "2", "10101")}, 100, "1 2 10101 4194304", false},
		{"none answers", []columnWalk{col(false), col(false)}, 100, "", false},
		{"none beyond a cut column", []columnWalk{col(true, "1", "2", "3"), col(false, "2", "9")}, 3, "1 2 3", true},
		{"at most the limit", []columnWalk{col(false, "1", "3"), col(false, "2", "4")}, 3, "1 2 3", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows, truncated := rowIndexes(tc.walked, tc.max)
			if got := strings.Join(rows, " "); got != tc.want || truncated != tc.truncated {
				t.Errorf("rows %q truncated %v, want %q %v", got, truncated, tc.want, tc.truncated)
			}
		})
	}
}
