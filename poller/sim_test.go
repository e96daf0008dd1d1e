package poller_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/simulate"
	"github.com/spoold/spoold/spool"
)

// checkTruth compares an entry with what the fleet serves at that time.
func checkTruth(t *testing.T, r *rig, i int, prof *fleet.Profile, at time.Time) spool.Entry {
	t.Helper()
	e := r.entry(t, i, at)
	if len(e.Values) != len(prof.DS) {
		t.Fatalf("device %d: %d values, want %d", i, len(e.Values), len(prof.DS))
	}
	for k, d := range prof.DS {
		got := e.Values[k]
		want := r.sim.Fleet().Value(i, d.OID, at)
		if got.Name != d.Name {
			t.Errorf("device %d value %d: name %s, want %s", i, k, got.Name, d.Name)
		}
		switch want.Type {
		case gosnmp.Counter64:
			if got.Type != spool.Counter || got.Counter != want.Value.(uint64) {
				t.Errorf("device %d %s: %v %d, want counter %d", i, d.Name, got.Type, got.Counter, want.Value)
			}
		case gosnmp.NoSuchInstance, gosnmp.NoSuchObject:
			if got.Type != spool.Unknown {
				t.Errorf("device %d %s: %v, want unknown (%v)", i, d.Name, got.Type, want.Type)
			}
		default:
			t.Fatalf("device %d %s: unexpected simulated type %v", i, d.Name, want.Type)
		}
	}
	return e
}

func TestCycleWritesTheFleetsValues(t *testing.T) {
	r := newRig(t, simOptions(12), pollOptions(), "if-mib:4", 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
	prof, _ := fleet.IfMIBProfile(4)
	for cycle := range 2 {
		at := r.clock.Advance(5 * time.Minute)
		st := r.p.Cycle(context.Background())
		if st.OK != 12 || st.Failed != 0 || st.Skipped != 0 || st.Overrun != 0 || st.Devices != 12 {
			t.Fatalf("cycle %d: %+v", cycle, st)
		}
		if st.Values != 12*16 || st.Unknown != 0 || st.Discontinuities != 0 {
			t.Errorf("cycle %d: values %d unknown %d discontinuities %d", cycle, st.Values, st.Unknown, st.Discontinuities)
		}
		for i := range 12 {
			if e := checkTruth(t, r, i, prof, at); e.Flags != 0 {
				t.Errorf("device %d: flags %d", i, e.Flags)
			}
		}
	}
	if got := len(r.sink.refs()); got != 12 {
		t.Errorf("sink got %d segments, want 12 (the second cycle appends to each device's open segment)", got)
	}
	if req := r.sim.Stats().Requests; req != 24 {
		t.Errorf("simulator got %d requests, want one per device and cycle (24)", req)
	}
	st, ok := r.p.Status(r.sim.Fleet().Name(3))
	if !ok || st.LastSuccess != r.clock.Now() || st.LastError != "" || st.Polls != 2 || st.RTT <= 0 {
		t.Errorf("status %+v", st)
	}
}

func TestDeadDeviceFailsAloneAndBacksOff(t *testing.T) {
	so := simOptions(4)
	po := pollOptions()
	po.Concurrency = 1 // the dead device must not hold up the others
	po.BackoffAfter = 2
	po.BackoffMax = 4 * po.Interval
	r := newRig(t, so, po, "if-mib:2", 0, 1, 2, 3)
	r.sim.Fleet().SetBehavior(2, simulate.Behavior{Dead: true})
	// Make the dead device's timeouts short.
	ts := simTargets(t, r.sim, "if-mib:2", "", 0, 1, 3)
	dead := simTargets(t, r.sim, "if-mib:2", "", 2)[0]
	dead.Timeout = 50 * time.Millisecond
	if err := r.p.SetTargets(append(ts, dead)); err != nil {
		t.Fatal(err)
	}
	// failures 1, 2 (then sit out 1), probe: 3 (sit out 2), ...
	want := []struct{ ok, failed, skipped int }{
		{3, 1, 0}, {3, 1, 0}, {3, 0, 1}, {3, 1, 0}, {3, 0, 1}, {3, 0, 1}, {3, 1, 0},
	}
	for c, w := range want {
		r.clock.Advance(5 * time.Minute)
		st := r.p.Cycle(context.Background())
		if st.OK != w.ok || st.Failed != w.failed || st.Skipped != w.skipped {
			t.Fatalf("cycle %d: ok %d failed %d skipped %d, want %+v", c, st.OK, st.Failed, st.Skipped, w)
		}
	}
	st, _ := r.p.Status(dead.Name)
	if st.ConsecutiveFailures != 4 || st.LastError == "" || !st.LastSuccess.IsZero() || st.SkipCycles != 4 {
		t.Errorf("dead device status %+v", st)
	}
	// It comes back: the next probe finds it and it is polled every cycle again.
	r.sim.Fleet().SetBehavior(2, simulate.Behavior{})
	for c := 0; ; c++ {
		r.clock.Advance(5 * time.Minute)
		if st := r.p.Cycle(context.Background()); st.OK == 4 {
			break
		}
		if c > 4 {
			t.Fatal("a device that came back was not probed within its backoff")
		}
	}
	st, _ = r.p.Status(dead.Name)
	if st.ConsecutiveFailures != 0 || st.SkipCycles != 0 || st.LastError != "" {
		t.Errorf("revived device status %+v", st)
	}
}

func TestSlowDevice(t *testing.T) {
	r := newRig(t, simOptions(3), pollOptions(), "if-mib:4", 0, 1, 2)
	const delay = 150 * time.Millisecond
	r.sim.Fleet().SetBehavior(1, simulate.Behavior{Delay: delay})
	r.clock.Advance(time.Minute)
	if st := r.p.Cycle(context.Background()); st.OK != 3 {
		t.Fatalf("slow device within its timeout: %+v", st)
	}
	if st, _ := r.p.Status(r.sim.Fleet().Name(1)); st.RTT < delay {
		t.Errorf("slow device RTT %v, below its delay %v", st.RTT, delay)
	}
	// Slower than its timeout: a failure, the others unaffected.
	ts := simTargets(t, r.sim, "if-mib:4", "", 0, 1, 2)
	ts[1].Timeout = delay / 3
	if err := r.p.SetTargets(ts); err != nil {
		t.Fatal(err)
	}
	r.clock.Advance(time.Minute)
	if st := r.p.Cycle(context.Background()); st.OK != 2 || st.Failed != 1 {
		t.Fatalf("slow device past its timeout: %+v", st)
	}
}

func TestWrapIsWrittenAsCounters(t *testing.T) {
	so := simOptions(2)
	so.WrapAfter = 24 * time.Hour
	r := newRig(t, so, pollOptions(), "if-mib:4", 0, 1)
	f := r.sim.Fleet()
	f.SetBehavior(0, simulate.Behavior{Wrap: true})
	f.Restart(0, r.clock.Now())
	prof, _ := fleet.IfMIBProfile(4)
	// Polls just before and just after the wrap, 24h after the restart.
	r.clock.Advance(24*time.Hour - 2*time.Minute)
	r.p.Cycle(context.Background())
	before := checkTruth(t, r, 0, prof, r.clock.Now())
	at := r.clock.Advance(5 * time.Minute)
	if st := r.p.Cycle(context.Background()); st.Discontinuities != 0 {
		t.Errorf("a wrap was flagged as a restart: %+v", st)
	}
	after := checkTruth(t, r, 0, prof, at)
	for k := range before.Values {
		b, a := before.Values[k].Counter, after.Values[k].Counter
		if a >= b {
			t.Errorf("%s: %d then %d, want a wrap", before.Values[k].Name, b, a)
		}
		rate := float64(a-b) / 300 // uint64 arithmetic undoes the wrap, as RRD COUNTER does
		if rate <= 0 || rate > 12_500_000 {
			t.Errorf("%s: rate across the wrap %g", before.Values[k].Name, rate)
		}
	}
}

func TestRestartFlagsTheSample(t *testing.T) {
	r := newRig(t, simOptions(2), pollOptions(), "if-mib:4", 0, 1)
	f := r.sim.Fleet()
	r.clock.Advance(time.Minute)
	r.p.Cycle(context.Background())
	f.Restart(0, r.clock.Advance(2*time.Minute))
	at := r.clock.Advance(3 * time.Minute)
	st := r.p.Cycle(context.Background())
	if st.Discontinuities != 1 {
		t.Fatalf("discontinuities %d, want 1", st.Discontinuities)
	}
	if e := r.entry(t, 0, at); e.Flags&spool.FlagDiscontinuity == 0 {
		t.Errorf("restarted device: flags %d", e.Flags)
	}
	if e := r.entry(t, 1, at); e.Flags != 0 {
		t.Errorf("other device: flags %d", e.Flags)
	}
	// The next sample is continuous again.
	at = r.clock.Advance(5 * time.Minute)
	r.p.Cycle(context.Background())
	if e := r.entry(t, 0, at); e.Flags != 0 {
		t.Errorf("sample after the restart one: flags %d", e.Flags)
	}
	if s, _ := r.p.Status(f.Name(0)); s.Restarts != 1 {
		t.Errorf("restarts %d", s.Restarts)
	}
}

func TestMissingOIDsAreUnknown(t *testing.T) {
	for _, version := range []string{"1", "2c"} {
		t.Run("v"+version, func(t *testing.T) {
			r := newRig(t, simOptions(2), pollOptions(), "if-mib:4", 0, 1)
			if err := r.p.SetTargets(simTargets(t, r.sim, "if-mib:4", "version="+version, 0, 1)); err != nil {
				t.Fatal(err)
			}
			r.sim.Fleet().SetBehavior(1, simulate.Behavior{Missing: true})
			at := r.clock.Advance(time.Minute)
			st := r.p.Cycle(context.Background())
			// Interfaces 3 and 4 (4 values each) and outpkt of 1 and 2.
			if st.OK != 2 || st.Unknown != 10 {
				t.Fatalf("%+v", st)
			}
			prof, _ := fleet.IfMIBProfile(4)
			checkTruth(t, r, 1, prof, at)
			checkTruth(t, r, 0, prof, at)
			if s, _ := r.p.Status(r.sim.Fleet().Name(1)); s.Unknown != 10 {
				t.Errorf("status unknown %d", s.Unknown)
			}
		})
	}
}

func TestLargeProfileIsSplitIntoGets(t *testing.T) {
	for _, tc := range []struct{ ifaces, maxVarbinds, gets int }{
		{15, 60, 2}, // 60 OIDs + sysUpTime
		{14, 60, 1}, // 56 + 1
		{40, 60, 3}, // 161
		{10, 7, 6},  // 41
	} {
		t.Run(fmt.Sprintf("if-mib:%d/max%d", tc.ifaces, tc.maxVarbinds), func(t *testing.T) {
			so := simOptions(1)
			so.Interfaces = tc.ifaces
			po := pollOptions()
			po.MaxVarbinds = tc.maxVarbinds
			profile := fmt.Sprintf("if-mib:%d", tc.ifaces)
			r := newRig(t, so, po, profile, 0)
			at := r.clock.Advance(time.Minute)
			if st := r.p.Cycle(context.Background()); st.OK != 1 || st.Unknown != 0 {
				t.Fatalf("%+v", st)
			}
			if got := r.sim.Stats().Requests; got != uint64(tc.gets) {
				t.Errorf("%d Gets, want %d", got, tc.gets)
			}
			prof, _ := fleet.IfMIBProfile(tc.ifaces)
			checkTruth(t, r, 0, prof, at)
		})
	}
}

func TestCycleDeadlineCutsPollsShort(t *testing.T) {
	po := pollOptions()
	po.Interval = time.Minute
	po.CycleTimeout = 200 * time.Millisecond
	po.Concurrency = 1
	r := newRig(t, simOptions(3), po, "if-mib:1", 0, 1, 2)
	ts := simTargets(t, r.sim, "if-mib:1", "timeout=30s", 0, 1, 2)
	if err := r.p.SetTargets(ts); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		r.sim.Fleet().SetBehavior(i, simulate.Behavior{Dead: true})
	}
	st := r.p.Cycle(context.Background())
	if st.Overrun != 3 || st.Failed != 0 || st.Duration >= 30*time.Second {
		t.Fatalf("%+v", st)
	}
	// Overrun is not the device's fault: no backoff.
	if s, _ := r.p.Status(ts[0].Name); s.ConsecutiveFailures != 0 || s.LastError == "" {
		t.Errorf("status %+v", s)
	}
}

func TestFullIndexKeepsEntriesOnDisk(t *testing.T) {
	r := newRig(t, simOptions(3), pollOptions(), "if-mib:1", 0, 1, 2)
	r.sink.full = true
	at := r.clock.Advance(time.Minute)
	st := r.p.Cycle(context.Background())
	if st.OK != 3 || st.IndexDeferred != 3 || st.WriteErrors != 0 {
		t.Fatalf("%+v", st)
	}
	for i := range 3 {
		r.entry(t, i, at) // on disk for the loader's rescan
	}
}

// TestRunCyclesUntilCancelled: Run polls every device in each cycle, one
// cycle an interval, until its context ends. The interval leaves a
// cycle's polls (cut at 90% of it) the time a loaded machine may take.
func TestRunCyclesUntilCancelled(t *testing.T) {
	po := pollOptions()
	po.Interval = time.Second
	cycles := make(chan poller.CycleStats, 16)
	po.OnCycle = func(st poller.CycleStats) {
		select {
		case cycles <- st:
		default:
		}
	}
	r := newRig(t, simOptions(2), po, "if-mib:1", 0, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.p.Run(ctx) }()
	for range 3 {
		r.clock.Advance(time.Second) // distinct entry names
		if st := <-cycles; st.OK != 2 {
			t.Errorf("cycle %+v", st)
		}
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("Run returned %v", err)
	}
	if s := r.p.LastCycle(); s.Seq < 3 {
		t.Errorf("last cycle %+v", s)
	}
}
