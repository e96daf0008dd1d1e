package poller_test

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/simulate"
)

// Rows lists a switch's interfaces as its device page shows them: each
// with its ifName, ifAlias and ifOperStatus at the last poll, none before
// the first poll; rows a later discovery does not find are listed gone,
// with their names, once each.
func TestRowsOfASwitch(t *testing.T) {
	so := vendorSim(1)
	so.Interfaces = 8
	r := newRig(t, so, pollOptions(), "if-mib", 0)
	name := r.sim.Fleet().Name(0)
	if rows, ok := r.p.Rows(name); !ok || len(rows) != 0 {
		t.Fatalf("before the first poll: %v %v, want no rows", rows, ok)
	}
	if _, ok := r.p.Rows("nosuch"); ok {
		t.Error("rows of a target the poller does not poll")
	}
	r.p.Cycle(context.Background())
	ifcs := r.sim.Fleet().Interfaces(0, r.clock.Now())
	rows, _ := r.p.Rows(name)
	if len(rows) != len(ifcs) {
		t.Fatalf("%d rows, the switch has %d interfaces", len(rows), len(ifcs))
	}
	states := map[string]int{}
	for _, ifc := range ifcs {
		want := poller.RowStatus{Table: "if", Key: name + "/" + fleet.InstanceSegment(ifc.Name), Name: ifc.Name,
			Index: strconv.Itoa(ifc.Index), Alias: ifc.Alias, State: "down"}
		if ifc.OperUp {
			want.State = "up"
		}
		states[want.State]++
		if k := slices.IndexFunc(rows, func(r poller.RowStatus) bool { return r.Name == ifc.Name }); k < 0 || rows[k] != want {
			t.Errorf("interface %s: not listed as %+v: %+v", ifc.Name, want, rows)
		}
	}
	if states["up"] == 0 || states["down"] == 0 {
		t.Fatalf("states %v: the simulator should have some interfaces down", states)
	}

	// Half the interfaces vanish: they are listed gone, once each.
	r.sim.Fleet().SetBehavior(0, simulate.Behavior{Missing: true})
	if ok, _ := r.p.Discover(context.Background(), true); ok != 1 {
		t.Fatal("no rediscovery")
	}
	rows, _ = r.p.Rows(name)
	seen := map[string]bool{}
	gone := 0
	for _, row := range rows {
		if seen[row.Name] {
			t.Errorf("%s listed twice", row.Name)
		}
		seen[row.Name] = true
		if row.State == poller.RowGone {
			gone++
		}
	}
	if len(rows) != len(ifcs) || gone != len(ifcs)-len(ifcs)/2 {
		t.Errorf("after half the rows vanished: %d rows, %d gone; want %d and %d", len(rows), gone, len(ifcs), len(ifcs)-len(ifcs)/2)
	}
	for _, ifc := range ifcs {
		if !seen[ifc.Name] {
			t.Errorf("interface %s not listed", ifc.Name)
		}
	}
}
