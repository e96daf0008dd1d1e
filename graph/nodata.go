package graph

import (
	"math"
	"slices"
	"time"

	"github.com/spoold/spoold/rrd"
)

// NoDataLegend is what the legend of a graph whose range holds no known
// value says in place of the values (whose averages, maxima and
// percentiles would read nan and inf).
const NoDataLegend = "no data yet"

// rangeHasData reports whether the file at path beneath root holds a known value, in
// o's range, of a data source that one of t's DEFs draws: one fetch per
// consolidation function, at the graph's resolution (a row per pixel, as
// librrd asks for the graph), so it costs at most what one DEF costs.
func rangeHasData(root *rrd.Root, path string, t *Template, o Options) (bool, error) {
	byCF := map[string][]string{}
	for _, e := range t.Elements {
		if e.Kind == Def {
			cf := e.CF
			if cf == "" {
				cf = "AVERAGE"
			}
			byCF[cf] = append(byCF[cf], e.DS)
		}
	}
	step := max(o.End.Sub(o.Start)/time.Duration(max(o.Width, 1)), time.Second)
	for cf, ds := range byCF {
		f, err := root.Fetch(path, cf, o.Start, o.End, step)
		if err != nil {
			return false, err
		}
		for i, v := range f.Values {
			if !math.IsNaN(v) && slices.Contains(ds, f.DS[i%len(f.DS)]) {
				return true, nil
			}
		}
	}
	return false, nil
}

// withoutValues is t drawn over a range without a known value: its
// GPRINTs, and the HRULEs at a VDEF's value, left out, and NoDataLegend
// on a line of its own, centred, below the legends.
func (t *Template) withoutValues() *Template {
	n := *t
	n.Elements = slices.DeleteFunc(slices.Clone(t.Elements), func(e Element) bool {
		return e.Kind == GPrint || e.Kind == HRule && e.VName != ""
	})
	n.Elements = append(n.Elements, Element{Kind: Comment, Legend: `\n`}, Element{Kind: Comment, Legend: NoDataLegend + `\c`})
	return &n
}
