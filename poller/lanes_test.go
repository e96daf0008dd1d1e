package poller

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/spoold/spoold/fleet"
)

// TestTableRuns: the runs of a bulk table's rows cover every row once, in
// order, each run of at least one GetBulk's worth of rows, walked from the
// row before it up to its own last, its values where the table's rows
// have theirs.
func TestTableRuns(t *testing.T) {
	for _, tc := range []struct{ rows, lanes, maxReps, want int }{
		{0, 8, 25, 1}, {10, 8, 25, 1}, {49, 8, 25, 1}, {50, 8, 25, 2}, {150, 3, 1, 3},
		{3000, 3, 25, 3}, {3000, 8, 25, 8}, {7, 8, 1, 7},
	} {
		t.Run(fmt.Sprintf("%d rows %d lanes %d reps", tc.rows, tc.lanes, tc.maxReps), func(t *testing.T) {
			tp := &tablePlan{table: &fleet.Table{Columns: make([]fleet.Column, 3)}, at: 5, bulk: true}
			for i := range tc.rows {
				tp.rows = append(tp.rows, Row{Index: strconv.Itoa(10 + i)})
			}
			if tc.rows > 0 {
				tp.last = tp.rows[tc.rows-1].Index
			}
			runs := tp.runs(tc.lanes, tc.maxReps)
			if len(runs) != tc.want {
				t.Fatalf("%d runs, want %d", len(runs), tc.want)
			}
			next := 0
			for k, r := range runs {
				switch {
				case len(runs) > 1 && len(r.rows) < tc.maxReps:
					t.Errorf("run %d: %d rows, fewer than one GetBulk's %d", k, len(r.rows), tc.maxReps)
				case k == 0 && r.after != "", k > 0 && r.after != tp.rows[next-1].Index:
					t.Errorf("run %d starts after %q, want after row %d", k, r.after, next-1)
				case len(r.rows) > 0 && r.last != r.rows[len(r.rows)-1].Index:
					t.Errorf("run %d ends at %q, not at its last row", k, r.last)
				case r.rowAt(0) != tp.rowAt(next):
					t.Errorf("run %d has its values at %d, row %d at %d", k, r.rowAt(0), next, tp.rowAt(next))
				}
				for _, row := range r.rows {
					if row.Index != tp.rows[next].Index {
						t.Fatalf("run %d: row %s where row %d belongs", k, row.Index, next)
					}
					next++
				}
			}
			if next != tc.rows {
				t.Errorf("the runs cover %d of %d rows", next, tc.rows)
			}
		})
	}
}
