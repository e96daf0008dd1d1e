package graph_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/graph"
)

// keyGraphs is what the daemon offers for a key of t.
func keyGraphs(t *fleet.Target, key string) []*graph.Template {
	ds, _ := t.KeyDS(key)
	return graph.ForKey(t.Profile.Graphs, fleet.DSNames(ds))
}

// ForKey offers a profile's templates beside the built-ins: one of a
// built-in's name replaces it, in its place, for that profile only; a
// template is offered to the keys whose data sources it fits.
func TestKeyGraphsOfAProfile(t *testing.T) {
	ps, err := fleet.ParseProfiles(strings.NewReader(`profile sw
  ds uptime sysUpTime.0 GAUGE 0 U
  use if-mib
  graph traffic
    def  in in
    line in 00C000 in
  graph up
    def  up uptime
    line up 000000 uptime
`), "p.conf")
	if err != nil {
		t.Fatal(err)
	}
	sw := &fleet.Target{Name: "s1", Profile: ps["sw"]}
	std := &fleet.Target{Name: "s2", Profile: fleet.IfMIBTableProfile()}
	names := func(gs []*graph.Template) (out []string) {
		for _, g := range gs {
			out = append(out, g.Name)
		}
		return out
	}
	row := keyGraphs(sw, "s1/eth0")
	if got := names(row); !slices.Equal(got, []string{"traffic", "packets", "errors"}) || row[0] != ps["sw"].Graphs[0] {
		t.Errorf("graphs of a row of sw: %v (traffic the profile's: %v)", got, len(row) > 0 && row[0] == ps["sw"].Graphs[0])
	}
	if got := names(keyGraphs(sw, "s1")); !slices.Equal(got, []string{"up"}) {
		t.Errorf("graphs of sw's scalars: %v, want [up]", got)
	}
	if g := keyGraphs(std, "s2/eth0"); len(g) != 3 || g[0] == ps["sw"].Graphs[0] || g[0].Name != "traffic" {
		t.Errorf("graphs of a row of if-mib: %v, want the built-ins", names(g))
	}
}
