package admin

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// TestCollectorDescribesWhatItCollects gathers the status collector with a
// pedantic registry, which fails on a metric that Describe did not
// announce or that is inconsistent with its description, before and after
// the first cycle.
func TestCollectorDescribesWhatItCollects(t *testing.T) {
	for _, cycle := range []bool{true, false} {
		fb := newFakeDaemon(okTarget("core-1"), NewTargetStatus(pollerFailing("edge-2", 1, 0), nil))
		if !cycle {
			fb.status.LastCycle = nil
		}
		reg := prometheus.NewPedanticRegistry()
		if err := reg.Register(NewCollector(fb, nil)); err != nil {
			t.Fatal(err)
		}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatalf("cycle %v: %v", cycle, err)
		}
		if len(mfs) < 100 {
			t.Errorf("cycle %v: %d families", cycle, len(mfs))
		}
	}
}
