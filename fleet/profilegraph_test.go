package fleet_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/spoold/spoold/fleet"
)

const graphsText = `profile sw
  use if-mib
  # a traffic graph of this profile's own: replaces the built-in one
  graph traffic
    title {instance} ({alias}) octets
    def   in  in
    line  in  00C000 "in octets"
  graph rate
    def  out out
    cdef bits out,8,*
    area bits 0000FF out
profile edge
  use sw
  graph rate
    def  in in
    line in FF0000 width=2 in
`

// A profiles file's graph blocks are parsed into the profile; a use line
// copies them, and a graph of the same name replaces a copied one.
func TestParseProfileGraphs(t *testing.T) {
	ps, err := fleet.ParseProfiles(strings.NewReader(graphsText), "p.conf")
	if err != nil {
		t.Fatal(err)
	}
	names := func(p *fleet.Profile) (out []string) {
		for _, g := range p.Graphs {
			out = append(out, g.Name+":"+strings.Join(g.DS(), ","))
		}
		return out
	}
	if got, want := strings.Join(names(ps["sw"]), " "), "traffic:in rate:out"; got != want {
		t.Errorf("sw's graphs %q, want %q", got, want)
	}
	if got, want := strings.Join(names(ps["edge"]), " "), "traffic:in rate:in"; got != want {
		t.Errorf("edge's graphs %q, want %q", got, want)
	}
	if g := ps["sw"].Graphs[0]; g.Title != "{instance} ({alias}) octets" || len(g.Elements) != 2 {
		t.Errorf("sw's traffic graph: %+v", g)
	}
	if len(ps["sw"].Tables) != 1 || len(ps["sw"].Tables[0].Columns) == 0 {
		t.Errorf("the graph blocks took the table's lines: %+v", ps["sw"].Tables)
	}
}

// A bad graph block is an error naming the file and the line at fault.
func TestParseProfileGraphErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"graph g\n  def in in\n  line in 00FF00\nprofile p\n  ds in 1.3.6.1.2.1.1.3.0 GAUGE\n", `p.conf:1: "graph" before the first "profile" line`},
		{"profile p\n  ds in 1.3.6.1.2.1.1.3.0 GAUGE\n  graph g\n    def in in\n    line in nocolor\n", `p.conf:5: bad graph template g: element 2 (LINE): color "nocolor"`},
		{"profile p\n  ds in 1.3.6.1.2.1.1.3.0 GAUGE\n  graph g\n    def in in\n", "p.conf:3: bad graph template g: no AREA or LINE"},
		{"profile p\n  ds in 1.3.6.1.2.1.1.3.0 GAUGE\n  graph g\n    def in nosuch\n    line in 00FF00\n", "p.conf:3: graph g: no key of profile p has its data sources nosuch"},
		{"profile p\n  ds in 1.3.6.1.2.1.1.3.0 GAUGE\n  graph g\n    def in in\n    line in 00FF00\n  graph g\n    def in in\n    line in 0000FF\n", "p.conf:6: profile p: graph g already defined on line 3"},
		{"profile p\n  ds in 1.3.6.1.2.1.1.3.0 GAUGE\n  graph g\n    def in in\n    line in 00FF00\n    column x 1.3.6.1.2.1.1.3.0 GAUGE\n", `p.conf:6: "column" outside a table`},
	} {
		_, err := fleet.ParseProfiles(strings.NewReader(c.text), "p.conf")
		var ce *fleet.ConfigError
		if err == nil || !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one starting %q", c.text, err, c.want)
		}
	}
}
