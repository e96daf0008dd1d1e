package poller_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/internal/testing/simtest"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/simulate"
	"github.com/spoold/spoold/spool"
)

const (
	oidIfHCInOctets = "1.3.6.1.2.1.31.1.1.1.6"
	oidIfInOctets   = "1.3.6.1.2.1.2.2.1.10"
)

// vendorSim is a simulator of devices numbered as real gear is.
func vendorSim(devices int) simulate.Options {
	o := simOptions(devices)
	o.Interfaces = 48
	o.Numbering = simulate.Vendor
	o.Down = 0.25
	return o
}

// rowEntry returns the entry of key at time at.
func rowEntry(t *testing.T, r *rig, key string, at time.Time) spool.Entry {
	t.Helper()
	for _, e := range spooled(t, r.sp, key) {
		if e.Time == at.Unix() {
			return e
		}
	}
	t.Fatalf("no entry of %s at %v", key, at)
	return spool.Entry{}
}

// checkRows checks that each interface of device i has its entry at at,
// under the key of its ifName, with the octets the fleet serves under its
// current ifIndex (from column), and returns the entries by name.
func checkRows(t *testing.T, r *rig, i int, at time.Time, column string) map[string]spool.Entry {
	t.Helper()
	f := r.sim.Fleet()
	out := map[string]spool.Entry{}
	for _, ifc := range f.Interfaces(i, at) {
		key := fleet.RowKey(f.Name(i), fleet.InstanceSegment(ifc.Name))
		e := rowEntry(t, r, key, at)
		want := f.Value(i, column+"."+strconv.Itoa(ifc.Index), at)
		var n uint64
		switch v := want.Value.(type) {
		case uint64:
			n = v
		case uint:
			n = uint64(v)
		case uint32:
			n = uint64(v)
		default:
			t.Fatalf("%s: fleet serves %v (%v) for %s", key, want.Value, want.Type, column)
		}
		if got := e.Values[0]; got.Name != "in" || got.Type != spool.Counter || got.Counter != n {
			t.Errorf("%s (ifIndex %d): in %+v, want %d", key, ifc.Index, got, n)
		}
		out[ifc.Name] = e
	}
	return out
}

// TestRestartRepollIsStampedAfterItsAnswer: a poll that finds the agent
// restarted discovers it again and polls its rows again; the rows' entries
// hold the second poll's counters, so they must carry its time, not the
// first poll's (a rate over the next interval would be off by the time the
// rediscovery took). Each answer of the simulator comes a second after the
// one before: a row's counter must be the agent's at or before the entry's
// time.
func TestRestartRepollIsStampedAfterItsAnswer(t *testing.T) {
	so := simOptions(1)
	so.Numbering = simulate.Vendor
	r := newRig(t, so, pollOptions(), "if-mib", 0)
	f := r.sim.Fleet()
	f.SetBehavior(0, simulate.Behavior{Renumber: true})
	r.clock.Advance(5 * time.Minute)
	r.p.Cycle(context.Background())
	f.Restart(0, r.clock.Advance(time.Minute))
	r.clock.Advance(4 * time.Minute)
	r.clock.stepAnswers(time.Second)
	if st := r.p.Cycle(context.Background()); st.Discontinuities != 1 || st.StaleRows != 0 || st.Rows != so.Interfaces {
		t.Fatalf("the restart's cycle: %+v", st)
	}
	for _, ifc := range f.Interfaces(0, r.clock.Now()) {
		key := fleet.RowKey(f.Name(0), fleet.InstanceSegment(ifc.Name))
		es := spooled(t, r.sp, key)
		e := es[len(es)-1]
		at := time.Unix(e.Time, int64(e.Milli)*int64(time.Millisecond))
		then := f.Value(0, oidIfHCInOctets+"."+strconv.Itoa(ifc.Index), at).Value.(uint64)
		if got := e.Values[0].Counter; got > then {
			t.Errorf("%s: entry at %s holds counter %d, the agent's at that time is %d: stamped before the answer", key, at.Format(time.TimeOnly), got, then)
		}
	}
}

func TestTablesOfVendorNumbering(t *testing.T) {
	for _, mode := range []poller.TableMode{poller.TableGet, poller.TableBulk, poller.TableAuto} {
		t.Run(string(mode), func(t *testing.T) {
			po := pollOptions()
			po.TableMode = mode
			r := newRig(t, vendorSim(3), po, "if-mib", 0, 1, 2)
			at := r.clock.Advance(5 * time.Minute)
			st := r.p.Cycle(context.Background())
			rows := 0
			for i := range 3 {
				rows += len(r.sim.Fleet().Interfaces(i, at))
			}
			if st.OK != 3 || st.Rows != rows || st.Unknown != 0 || st.WrongTypes != 0 {
				t.Fatalf("%+v, want %d rows", st, rows)
			}
			for i := range 3 {
				checkRows(t, r, i, at, oidIfHCInOctets)
			}
			// The second cycle needs no discovery: its requests are the poll's.
			at = r.clock.Advance(5 * time.Minute)
			ds := r.p.DiscoveryStats()
			st = r.p.Cycle(context.Background())
			if after := r.p.DiscoveryStats(); after.Requests != ds.Requests || after.Discoveries != 3 {
				t.Errorf("discoveries %+v then %+v", ds, after)
			}
			for i := range 3 {
				checkRows(t, r, i, at, oidIfHCInOctets)
			}
			t.Logf("%s: %d rows, %d requests for 3 devices", mode, st.Rows, st.Requests)
			// Per device: Gets of 60 of the 10 columns' cells and sysUpTime.0,
			// or GetBulk walks of 25 rows with sysUpTime.0 in the first.
			perDevice := rows / 3
			gets := (perDevice*10 + 1 + po.MaxVarbinds - 1) / po.MaxVarbinds
			bulks := (perDevice + po.MaxRepetitions - 1) / po.MaxRepetitions
			if want := map[poller.TableMode]int{poller.TableGet: 3 * gets, poller.TableBulk: 3 * bulks, poller.TableAuto: 3 * min(gets, bulks)}[mode]; st.Requests != want {
				t.Errorf("%s: %d requests for 3 devices of %d interfaces, want %d", mode, st.Requests, perDevice, want)
			}
		})
	}
}

// A device without HC counters: discovery picks ifInOctets per row and the
// data source keeps its name.
func TestTablesFallBackTo32Bits(t *testing.T) {
	so := vendorSim(2)
	r := newRig(t, so, pollOptions(), "if-mib", 0, 1)
	r.sim.Fleet().SetBehavior(1, simulate.Behavior{NoHC: true})
	at := r.clock.Advance(5 * time.Minute)
	if st := r.p.Cycle(context.Background()); st.OK != 2 || st.Unknown != 0 {
		t.Fatalf("%+v", st)
	}
	checkRows(t, r, 0, at, oidIfHCInOctets)
	checkRows(t, r, 1, at, oidIfInOctets)
}

// A device that renumbers its interfaces when it restarts: each interface
// keeps its key, and its first entry after the restart is flagged.
func TestTablesRenumberedDeviceKeepsKeys(t *testing.T) {
	r := newRig(t, vendorSim(1), pollOptions(), "if-mib", 0)
	f := r.sim.Fleet()
	f.SetBehavior(0, simulate.Behavior{Renumber: true})
	at := r.clock.Advance(5 * time.Minute)
	r.p.Cycle(context.Background())
	before := f.Interfaces(0, at)
	checkRows(t, r, 0, at, oidIfHCInOctets)

	f.Restart(0, r.clock.Advance(time.Minute))
	at = r.clock.Advance(4 * time.Minute)
	after := f.Interfaces(0, at)
	moved := 0
	for _, b := range before {
		for _, a := range after {
			if a.Name == b.Name && a.Index != b.Index {
				moved++
			}
		}
	}
	if moved == 0 {
		t.Fatal("the simulator did not renumber the interfaces")
	}
	st := r.p.Cycle(context.Background())
	if st.StaleRows != 0 || st.Rows != len(after) || st.Discontinuities != 1 {
		t.Fatalf("%+v", st)
	}
	for name, e := range checkRows(t, r, 0, at, oidIfHCInOctets) {
		if e.Flags&spool.FlagDiscontinuity == 0 {
			t.Errorf("%s: the first entry after the restart is not flagged", name)
		}
	}
	if s, _ := r.p.Status(f.Name(0)); s.Discoveries != 2 || len(s.GoneRows) != 0 {
		t.Errorf("status: %d discoveries, gone %v", s.Discoveries, s.GoneRows)
	}
	disc, ok := r.p.Discovery(f.Name(0))
	if !ok || len(disc.Tables[0].Rows) != len(after) {
		t.Fatalf("discovery %v %v", disc, ok)
	}
	for _, row := range disc.Tables[0].Rows {
		i := slices.IndexFunc(after, func(x simulate.Interface) bool { return x.Name == row.Name })
		if i < 0 || strconv.Itoa(after[i].Index) != row.Index {
			t.Errorf("row %+v: not the interface's index after the restart", row)
		}
	}
}

// Rows that vanish: the poll sees noSuchInstance, the next discovery
// (in the background) shows them as gone; their keys are not written.
func TestTablesGoneRows(t *testing.T) {
	r := newRig(t, vendorSim(1), pollOptions(), "if-mib", 0)
	f := r.sim.Fleet()
	r.clock.Advance(5 * time.Minute)
	r.p.Cycle(context.Background())
	all := f.Interfaces(0, r.clock.Now())
	f.SetBehavior(0, simulate.Behavior{Missing: true})
	at := r.clock.Advance(5 * time.Minute)
	r.p.Cycle(context.Background())
	if ok, failed := r.p.Discover(context.Background(), false); ok != 1 || failed != 0 {
		t.Fatalf("rediscovery after lost rows: %d ok, %d failed", ok, failed)
	}
	left := f.Interfaces(0, at)
	s, _ := r.p.Status(f.Name(0))
	if len(left) >= len(all) || s.Rows != len(left) || len(s.GoneRows) != len(all)-len(left) {
		t.Fatalf("%d interfaces, then %d: status rows %d gone %d", len(all), len(left), s.Rows, len(s.GoneRows))
	}
	at = r.clock.Advance(5 * time.Minute)
	if st := r.p.Cycle(context.Background()); st.Rows != len(left) {
		t.Fatalf("%+v", st)
	}
	for _, key := range s.GoneRows {
		if es := spooled(t, r.sp, key); len(es) != 2 {
			t.Errorf("gone row %s: %d entries, want the 2 of before it vanished", key, len(es))
		}
	}
}

// Discoveries running beside cycles: every cycle writes every row, right.
func TestDiscoveryDuringCycles(t *testing.T) {
	r := newRig(t, vendorSim(4), pollOptions(), "if-mib", 0, 1, 2, 3)
	r.clock.Advance(5 * time.Minute)
	r.p.Discover(context.Background(), true)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				r.p.Discover(context.Background(), true)
			}
		}
	}()
	for range 3 {
		at := r.clock.Advance(5 * time.Minute)
		if st := r.p.Cycle(context.Background()); st.OK != 4 || st.Unknown != 0 {
			t.Errorf("%+v", st)
		}
		for i := range 4 {
			checkRows(t, r, i, at, oidIfHCInOctets)
		}
	}
	close(stop)
	wg.Wait()
	if d := r.p.DiscoveryStats(); d.Discoveries < 8 || d.Failures != 0 {
		t.Errorf("%+v", d)
	}
}

// The noSuchInstance of a v1 agent is noSuchName: the rest of the rows
// are asked again.
func TestTablesV1(t *testing.T) {
	so := vendorSim(1)
	r := &rig{clock: newClock(), sink: &sink{}}
	so.Now = r.clock.Now
	r.sim = simtest.Serve(t, so)
	r.sp = openSpool(t)
	po := pollOptions()
	po.Now = r.clock.Now
	var err error
	r.p, err = poller.New(po, simTargets(t, r.sim, "if-mib", "version=1", 0), r.sp, r.sink, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := r.clock.Advance(5 * time.Minute)
	if st := r.p.Cycle(context.Background()); st.OK != 1 {
		t.Fatalf("%+v", st)
	}
	// v1 has no Counter64: the rows fall back to ifInOctets.
	checkRows(t, r, 0, at, oidIfInOctets)
}

// Rediscovery is due after SetTargets (SIGHUP) and after
// RediscoverInterval, and not before.
func TestRediscoveryIsDue(t *testing.T) {
	po := pollOptions()
	po.RediscoverInterval = time.Hour
	r := newRig(t, vendorSim(1), po, "if-mib", 0)
	ctx := context.Background()
	if ok, _ := r.p.Discover(ctx, false); ok != 0 {
		t.Fatalf("a device never discovered is its first poll's: %d discovered", ok)
	}
	r.clock.Advance(5 * time.Minute)
	if st := r.p.Cycle(ctx); st.Rows == 0 {
		t.Fatalf("the first cycle discovered nothing: %+v", st)
	}
	if ok, _ := r.p.Discover(ctx, false); ok != 0 {
		t.Fatalf("discovered again at once: %d", ok)
	}
	r.clock.Advance(61 * time.Minute)
	if ok, _ := r.p.Discover(ctx, false); ok != 1 {
		t.Fatalf("not rediscovered after the interval: %d", ok)
	}
	if err := r.p.SetTargets(simTargets(t, r.sim, "if-mib", "", 0)); err != nil {
		t.Fatal(err)
	}
	if ok, _ := r.p.Discover(ctx, false); ok != 1 {
		t.Fatalf("not rediscovered after SetTargets: %d", ok)
	}
}

// Run rediscovers in the background when a poll loses known rows, and
// leaves no goroutine when it returns (goleak in TestMain).
func TestRunRediscoversLostRows(t *testing.T) {
	so := vendorSim(1)
	so.Now = nil
	sim := simtest.Serve(t, so)
	po := pollOptions()
	po.Interval = 200 * time.Millisecond
	cycles := make(chan poller.CycleStats, 100)
	po.OnCycle = func(st poller.CycleStats) { cycles <- st }
	p, err := poller.New(po, simTargets(t, sim, "if-mib", "", 0), openSpool(t), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("Run: %v", err)
		}
	}()
	all := len(sim.Fleet().Interfaces(0, time.Now()))
	deadline := time.After(20 * time.Second)
	for s, _ := p.Status(sim.Fleet().Name(0)); s.Rows != all; s, _ = p.Status(sim.Fleet().Name(0)) {
		select { // the first discovery: inline in the first cycle, or Run's beside it
		case <-cycles:
		case <-deadline:
			t.Fatalf("no discovery of the %d interfaces: %+v", all, s)
		}
	}
	first, _ := p.Status(sim.Fleet().Name(0))
	sim.Fleet().SetBehavior(0, simulate.Behavior{Missing: true})
	for {
		select {
		case <-cycles:
		case <-deadline:
			s, _ := p.Status(sim.Fleet().Name(0))
			t.Fatalf("no background rediscovery: %+v", s)
		}
		if s, _ := p.Status(sim.Fleet().Name(0)); s.Discoveries > first.Discoveries && len(s.GoneRows) > 0 {
			if s.Rows+len(s.GoneRows) != all {
				t.Errorf("%d rows and %d gone, the device had %d", s.Rows, len(s.GoneRows), all)
			}
			return
		}
	}
}

// TestRunCarriesASlowFirstDiscovery: a device whose first discovery takes
// longer than a cycle (41 GetBulks of one row, each answer 100 ms late:
// 4.1 s against a 2.7 s cycle deadline) was discovered again from
// scratch in every cycle, cut at each deadline, and its worker held the
// other device's poll back. Under Run the discovery goes on across cycles
// and completes once, its rows are then polled, and every cycle polls both
// devices; Run leaves no goroutine behind (TestMain's goleak). The poll
// waits for the slow discovery one timeout (1 s); the other device's first
// discovery then runs inline (the one slot carries the slow one) for at
// most as long: 41 quick GetBulks, with room for a loaded machine.
func TestRunCarriesASlowFirstDiscovery(t *testing.T) {
	const interfaces = 40
	so := simOptions(2)
	so.Interfaces = interfaces
	po := pollOptions()
	po.Interval, po.Concurrency = 3*time.Second, 1
	po.MaxRepetitions, po.MaxVarbinds = 1, poller.MaxVarbinds
	cycles := make(chan poller.CycleStats, 64)
	var r *rig
	po.OnCycle = func(st poller.CycleStats) {
		r.clock.Advance(po.Interval)
		cycles <- st
	}
	r = newRig(t, so, po, "if-mib", 0, 1)
	r.sim.Fleet().SetBehavior(0, simulate.Behavior{Delay: 100 * time.Millisecond})
	if err := r.p.SetTargets(simTargets(t, r.sim, "if-mib", "timeout=1s", 0, 1)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.p.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != context.Canceled {
			t.Errorf("Run returned %v", err)
		}
	}()
	deadline := time.After(60 * time.Second)
	for n := 1; ; n++ {
		var st poller.CycleStats
		select {
		case st = <-cycles:
		case <-deadline:
			t.Fatalf("the slow device's rows not polled after %d cycles: %+v", n-1, r.p.DiscoveryStats())
		}
		if st.OK != 2 || st.Overrun != 0 {
			t.Errorf("cycle %d: %d of 2 devices polled, %d overrun", st.Seq, st.OK, st.Overrun)
		}
		if st.Rows == 2*interfaces {
			if n < 2 {
				t.Errorf("the slow discovery completed within the first cycle: the test shows nothing")
			}
			break
		}
	}
	// A discovery cut at each cycle's deadline never completes (the
	// deadline above); one that a loaded machine let time out is tried
	// again, as designed, so failures are not counted against it.
	if d := r.p.DiscoveryStats(); d.Discoveries != 2 {
		t.Errorf("discoveries %d (failures %d); want each device discovered once", d.Discoveries, d.Failures)
	}
}

// TestFileBoundsStopARenamingDevice: an agent that renames its interfaces
// at every restart made a new set of RRD files each time, without end.
// After the first discovery (exempt from the rate) a target may add
// NewFilesPerHour new row keys an hour and MaxFilesPerTarget in all; rows
// beyond are not polled (no spool entry, so no file and nothing waiting in
// the spool), and the status says how many and why.
func TestFileBoundsStopARenamingDevice(t *testing.T) {
	const ifaces = 4
	so := simOptions(1)
	so.Interfaces = ifaces
	po := pollOptions()
	po.MaxFilesPerTarget, po.NewFilesPerHour = 10, ifaces
	r := newRig(t, so, po, "if-mib", 0)
	f := r.sim.Fleet()
	f.SetBehavior(0, simulate.Behavior{Rename: true})
	name := f.Name(0)
	keys := func() []string {
		var ks []string
		for _, ifc := range f.Interfaces(0, r.clock.Now()) {
			ks = append(ks, fleet.RowKey(name, fleet.InstanceSegment(ifc.Name)))
		}
		return ks
	}
	restartAndPoll := func(after time.Duration) (poller.CycleStats, poller.DeviceStatus, []string) {
		f.Restart(0, r.clock.Advance(time.Minute)) // a minute after the last poll
		r.clock.Advance(after)
		st := r.p.Cycle(context.Background())
		s, _ := r.p.Status(name)
		return st, s, keys()
	}
	r.clock.Advance(5 * time.Minute)
	if st := r.p.Cycle(context.Background()); st.Rows != ifaces {
		t.Fatalf("first cycle: %+v", st)
	}
	for _, tc := range []struct {
		name        string
		after       time.Duration
		rows, over  int
		why         string
		overLimitOf int // of the rows' keys, how many are refused
	}{
		{"first rename: within the rate", 5 * time.Minute, ifaces, 0, "", 0},
		{"second rename: past the rate", 5 * time.Minute, 0, ifaces, "--max-new-files-per-hour", ifaces},
		{"an hour later: the rate allows them, the total 2 of them", time.Hour, 2, ifaces - 2, "--max-files-per-target", ifaces - 2},
	} {
		st, s, ks := restartAndPoll(tc.after)
		if st.Rows != tc.rows || s.Rows != tc.rows || s.OverLimitRows != tc.over || !strings.Contains(s.OverLimit, tc.why) {
			t.Fatalf("%s: cycle rows %d, status rows %d, over limit %d (%q); want %d rows, %d over the limit for %s",
				tc.name, st.Rows, s.Rows, s.OverLimitRows, s.OverLimit, tc.rows, tc.over, tc.why)
		}
		if ds := r.p.DiscoveryStats(); ds.OverLimit != uint64(tc.over) {
			t.Errorf("%s: DiscoveryStats.OverLimit %d, want %d", tc.name, ds.OverLimit, tc.over)
		}
		spooled := map[uint64]bool{}
		for _, ref := range r.sink.refs() {
			spooled[ref.Hash] = true
		}
		refused := 0
		for _, k := range ks {
			if !spooled[spool.KeyHash(k)] {
				refused++
			}
		}
		if refused != tc.overLimitOf {
			t.Errorf("%s: %d of the %d renamed rows have no spool entry, want %d", tc.name, refused, len(ks), tc.overLimitOf)
		}
	}
	if s, _ := r.p.Status(name); len(s.GoneRows) != 10-2 {
		t.Errorf("%d gone rows (their files stay), want the 8 earlier names", len(s.GoneRows))
	}
}
