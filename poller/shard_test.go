package poller_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/spool"
)

// TestThreePollersCoverTheFleetOnce: three pollers of the same targets
// file, shards 1/3, 2/3 and 3/3, each poll one cycle of a simulated fleet:
// every device is polled, by exactly one of them, and each says so in its
// ShardStatus.
func TestThreePollersCoverTheFleetOnce(t *testing.T) {
	const devices = 30
	all := make([]int, devices)
	for i := range all {
		all[i] = i
	}
	base := newRig(t, simOptions(devices), pollOptions(), "if-mib:2", all...)
	targets := simTargets(t, base.sim, "if-mib:2", "", all...)
	polledBy := make(map[uint64][]int)
	for k := 1; k <= 3; k++ {
		po := pollOptions()
		po.Now, po.Shard = base.clock.Now, fleet.Shard{K: k, N: 3}
		sk := &sink{}
		p, err := poller.New(po, targets, openSpool(t), sk, nil)
		if err != nil {
			t.Fatal(err)
		}
		st := p.Cycle(context.Background())
		ss := p.ShardStatus()
		if ss.Shard != fmt.Sprintf("%d/3", k) || ss.Targets != devices || ss.Polled != st.Devices || st.OK != st.Devices {
			t.Fatalf("shard %d/3: status %+v, cycle %+v", k, ss, st)
		}
		for _, r := range sk.refs() {
			polledBy[r.Hash] = append(polledBy[r.Hash], k)
		}
	}
	for i := range devices {
		name := base.sim.Fleet().Name(i)
		if by := polledBy[spool.KeyHash(name)]; len(by) != 1 || by[0] != fleet.ShardOf(name, 3) {
			t.Errorf("device %s polled by shards %v, want exactly shard %d", name, by, fleet.ShardOf(name, 3))
		}
	}
	if len(polledBy) != devices {
		t.Fatalf("%d keys polled, want %d", len(polledBy), devices)
	}
}
