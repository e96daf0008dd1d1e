package poller

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/internal/testing/testenv"
)

func (g *gate) state() (limit, counted, inFlight int, waiting bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.limit, g.counted, g.inFlight, g.waiting
}

// TestGateCountsPolls: polls start while fewer than the limit are counted
// in flight; one that stops counting (once, however often it says so) or
// one not counted at all lets another start, up to Concurrency.
func TestGateCountsPolls(t *testing.T) {
	g := newGate(100, 0, 1000, time.Hour, 0)
	floor := gateFloor(100)
	if limit, _, _, _ := g.state(); limit != floor || floor >= 100 {
		t.Fatalf("limit %d, floor %d: a gate starts at its floor, below Concurrency", limit, floor)
	}
	var uncounts []func()
	for range floor {
		uncounts = append(uncounts, g.enter(true))
	}
	g.enter(false) // a failing device's poll: a socket, no place
	entered := make(chan func())
	go func() { entered <- g.enter(true) }()
	testenv.WaitFor(t, "the poll past the limit waits", 30*time.Second, func() bool { _, _, _, w := g.state(); return w })
	select {
	case <-entered:
		t.Fatal("a poll past the limit started")
	default:
	}
	uncounts[0]()
	uncounts[0]()
	next := <-entered
	if _, counted, inFlight, _ := g.state(); counted != floor || inFlight != floor+2 {
		t.Fatalf("counted %d, in flight %d; want %d and %d", counted, inFlight, floor, floor+2)
	}
	next()
	for range 100 - floor - 2 {
		g.enter(false)
	}
	go func() { entered <- g.enter(false) }()
	testenv.WaitFor(t, "a poll past Concurrency waits", 30*time.Second, func() bool { _, _, _, w := g.state(); return w })
	g.leave(time.Millisecond)
	<-entered
	if _, _, inFlight, _ := g.state(); inFlight != 100 {
		t.Fatalf("%d in flight, want Concurrency's 100", inFlight)
	}
}

// TestGateLimitFollowsIdleCPU: the limit grows by a quarter while polls
// wait for a place and the CPUs have idle time (or it cannot be read), up
// to Concurrency; shrinks by a quarter while they have none, down to the
// floor; stays between the two, and without polls waiting; and grows
// without idle time when the cycle would not be done in its budget.
func TestGateLimitFollowsIdleCPU(t *testing.T) {
	floor := gateFloor(100)
	g := newGate(100, 0, 1000, time.Hour, 0)
	full := func() {
		g.mu.Lock()
		g.counted, g.waiting = g.limit, true
		g.mu.Unlock()
	}
	limit := func() int { l, _, _, _ := g.state(); return l }
	g.adjust(0.9, true)
	if limit() != floor {
		t.Fatalf("grew to %d with no poll waiting", limit())
	}
	full()
	g.adjust(0.9, true)
	if want := floor + floor/4; limit() != want {
		t.Fatalf("limit %d after an idle tick, want %d", limit(), want)
	}
	full()
	g.adjust(0.07, true)
	if want := floor + floor/4; limit() != want {
		t.Fatalf("limit %d after a tick between busy and idle, want %d", limit(), want)
	}
	for range 20 {
		full()
		g.adjust(0, false)
	}
	if limit() != 100 {
		t.Fatalf("limit %d after ticks of unknown idle time, want Concurrency's 100", limit())
	}
	for range 20 {
		g.adjust(0.01, true)
	}
	if limit() != floor {
		t.Fatalf("limit %d after busy ticks, want the floor %d", limit(), floor)
	}
	g.mu.Lock()
	g.start, g.done = time.Now().Add(-10*time.Second), 10 // 10 of 1,000 in 10 s: behind a 1-hour budget? no
	g.mu.Unlock()
	full()
	g.adjust(0.01, true)
	if limit() != floor {
		t.Fatalf("limit %d: grew on a busy CPU with the cycle on time", limit())
	}
	g.mu.Lock()
	g.budget = time.Minute // 1,000 s at this rate
	g.mu.Unlock()
	full()
	g.adjust(0.01, true)
	if want := floor + floor/4; limit() != want {
		t.Fatalf("limit %d behind the budget on a busy CPU, want %d", limit(), want)
	}
}

// TestGateLetsDeadDevicesWait: on CPUs with no idle time (the limit at its
// floor), the polls of devices whose last poll failed, and polls that
// have run for gateStall or their response timeout, do not take the
// limit's places: more than the floor are in flight at once.
func TestGateLetsDeadDevicesWait(t *testing.T) {
	for _, tc := range []struct {
		name     string
		failures int
		timeout  time.Duration
	}{{"failed before", 1, time.Hour}, {"past gateStall", 0, time.Hour}, {"past the timeout", 0, time.Millisecond}} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Poller{opts: DefaultOptions(), idleCPU: func() (float64, bool) { return 0, true }}
			p.opts.Timeout = tc.timeout
			n := gateFloor(p.opts.Concurrency) + 10
			var devs []*device
			for range n {
				d := &device{t: &fleet.Target{}}
				d.st.ConsecutiveFailures = tc.failures
				devs = append(devs, d)
			}
			var started atomic.Int64
			all := make(chan struct{})
			var once sync.Once
			go func() {
				select {
				case <-all:
				case <-time.After(30 * time.Second):
					t.Errorf("%d of %d polls in flight, the rest waiting", started.Load(), n)
					once.Do(func() { close(all) })
				}
			}()
			peak, limit := p.pollEach(devs, func(*device) {
				if started.Add(1) == int64(n) {
					once.Do(func() { close(all) })
				}
				<-all // every poll in flight at once, or none ends
			})
			if peak != n || limit != gateFloor(p.opts.Concurrency) {
				t.Fatalf("peak %d, limit %d; want %d and the floor", peak, limit, n)
			}
		})
	}
}

// TestGateStall: a poll counts against the limit for twice the median
// time of the polls done, gateStall at least, and before any is done for
// the last cycle's.
func TestGateStall(t *testing.T) {
	g := newGate(100, 0, 1000, time.Hour, 0)
	if s := g.stall(); s != gateStall {
		t.Fatalf("stall %v with no poll done and none before, want gateStall", s)
	}
	if s := newGate(100, 0, 1000, time.Hour, 3*time.Second).stall(); s != 3*time.Second {
		t.Fatalf("stall %v with no poll done, want the last cycle's 3s", s)
	}
	for range 6 {
		g.inFlight++
		g.leave(300 * time.Millisecond) // CPUs so busy that every poll takes 300 ms
	}
	for range 4 {
		g.inFlight++
		g.leave(2 * time.Second) // dead
	}
	if s := g.stall(); s < 600*time.Millisecond || s > 1200*time.Millisecond {
		t.Fatalf("stall %v, want twice the median 300 ms (to its bucket's bound)", s)
	}
	g = newGate(100, 0, 1000, time.Hour, 0)
	for range 10 {
		g.inFlight++
		g.leave(time.Millisecond)
	}
	if s := g.stall(); s != gateStall {
		t.Fatalf("stall %v for 1 ms polls, want gateStall", s)
	}
}
