package poller

import (
	"fmt"
	"strconv"
	"testing"
)

// TestTableRuns: the runs of a bulk table's rows cover every row once, in
// order, each run of at least one GetBulk's worth of rows, walked from the
// row before it up to its own last.
func TestTableRuns(t *testing.T) {
	for _, tc := range []struct{ rows, lanes, maxReps, want int }{
		{0, 8, 25, 1}, {10, 8, 25, 1}, {49, 8, 25, 1}, {50, 8, 25, 2}, {150, 3, 1, 3},
		{3000, 3, 25, 3}, {3000, 8, 25, 8}, {7, 8, 1, 7},
	} {
		t.Run(fmt.Sprintf("%d rows %d lanes %d reps", tc.rows, tc.lanes, tc.maxReps), func(t *testing.T) {
			tp := &tablePlan{bulk: true}
			for i := range tc.rows {
				tp.rows = append(tp.rows, planRow{index: strconv.Itoa(10 + i)})
			}
			if tc.rows > 0 {
				tp.last = tp.rows[tc.rows-1].index
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
				case k == 0 && r.after != "", k > 0 && r.after != tp.rows[next-1].index:
					t.Errorf("run %d starts after %q, want after row %d", k, r.after, next-1)
				case len(r.rows) > 0 && r.last != r.rows[len(r.rows)-1].index:
					t.Errorf("run %d ends at %q, not at its last row", k, r.last)
				}
				for _, row := range r.rows {
					if row.index != tp.rows[next].index {
						t.Fatalf("run %d: row %s where row %d belongs", k, row.index, next)
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
