package poller_test

import (
	"context"
	"testing"
	"time"

	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/simulate"
)

// TestSlowLargeTableIsPolled: a device of 150 interfaces that answers
// each request 20 ms late, walked one row a request, takes longer to walk
// (about 150 requests) than two 1.5 s cycles. Under Run its first
// discovery goes on beside the cycles, and its rows must then be polled
// whole, again and again, each time within a bound of the walk's own time
// (a cycle a loaded machine cuts short is not held against it). They never were:
// the poll of the rows sent as many requests as the walk (GetBulks of one
// row, or Gets of 10 cells), and was cut at every cycle's deadline.
func TestSlowLargeTableIsPolled(t *testing.T) {
	for _, mode := range []poller.TableMode{poller.TableBulk, poller.TableGet} {
		t.Run(string(mode), func(t *testing.T) {
			po := pollOptions()
			po.Interval, po.MaxRepetitions, po.TableMode = 1500*time.Millisecond, 1, mode
			if mode == poller.TableGet {
				po.MaxVarbinds = 10
			}
			testSlowLargeTableIsPolled(t, po)
		})
	}
}

func testSlowLargeTableIsPolled(t *testing.T, po poller.Options) {
	const interfaces = 150
	so := simOptions(1)
	so.Interfaces = interfaces
	type cycle struct {
		st poller.CycleStats
		at time.Time // the clock of its entries
	}
	cycles := make(chan cycle, 256)
	var r *rig
	po.OnCycle = func(st poller.CycleStats) {
		at := r.clock.Now()
		r.clock.Advance(po.Interval)
		cycles <- cycle{st, at}
	}
	r = newRig(t, so, po, "if-mib", 0)
	r.sim.Fleet().SetBehavior(0, simulate.Behavior{Delay: 20 * time.Millisecond})

	start := time.Now()
	disc, err := poller.Walk(context.Background(), po, simTargets(t, r.sim, "if-mib", "", 0)[0])
	walk := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(disc.Keys()); n != interfaces || walk < 2*po.Interval {
		t.Fatalf("the walk found %d rows in %v: want %d rows, and a walk longer than two cycles to show anything", n, walk, interfaces)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	start = time.Now()
	go func() { done <- r.p.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("Run returned %v", err)
		}
	}()
	// The discovery (one walk), the wait for the next cycle, the poll:
	// generous on a loaded machine.
	bound := 3*walk + 3*po.Interval
	deadline := time.After(bound)
	polled := 0
	for polled < 3 {
		var c cycle
		select {
		case c = <-cycles:
		case <-deadline:
			t.Fatalf("the rows polled in %d cycles %v after the start (the walk alone takes %v): %+v", polled, bound, walk, r.p.DiscoveryStats())
		}
		t.Logf("seq %d ok %d overrun %d rows %d requests %d in %v", c.st.Seq, c.st.OK, c.st.Overrun, c.st.Rows, c.st.Requests, c.st.Duration)
		if c.st.OK != 1 || c.st.Rows != interfaces {
			// The discovery goes on, or a loaded machine cut this
			// cycle: the deadline still wants the next whole poll
			// within the bound.
			continue
		}
		if polled == 0 {
			t.Logf("the walk takes %v; the rows were first polled %v after the start", walk, time.Since(start))
		}
		checkRows(t, r, 0, c.at, oidIfHCInOctets)
		polled++
		deadline = time.After(bound)
	}
}
