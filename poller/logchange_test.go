package poller_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/internal/testing/simtest"
	"github.com/spoold/spoold/poller"
)

// relay forwards SNMP between the poller and an agent while up is set,
// and drops every request otherwise (a device that went down). With
// lastOne set, it forwards one more request and then goes down.
type relay struct {
	conn    *net.UDPConn
	up      atomic.Bool
	lastOne atomic.Bool
}

func startRelay(t *testing.T, agent string) *relay {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	to, err := net.ResolveUDPAddr("udp", agent)
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{conn: c}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 65536)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			if !r.up.Load() {
				continue
			}
			if r.lastOne.CompareAndSwap(true, false) {
				r.up.Store(false)
			}
			up, err := net.DialUDP("udp", nil, to)
			if err != nil {
				continue
			}
			up.Write(buf[:n])
			up.SetReadDeadline(time.Now().Add(2 * time.Second))
			if m, err := up.Read(buf); err == nil {
				c.WriteToUDP(buf[:m], from)
			}
			up.Close()
		}
	}()
	t.Cleanup(func() { c.Close(); wg.Wait() })
	return r
}

// relayedDevice returns a relay to a simulated device, down until the test
// sets it up, and a target of the device through it with timeout= tmo and
// no retries.
func relayedDevice(t *testing.T, tmo string) (*relay, []*fleet.Target) {
	t.Helper()
	sim := simtest.Serve(t, simOptions(1))
	rl := startRelay(t, sim.Addr().String())
	name := sim.Fleet().Name(0)
	ts, err := fleet.ParseTargets(strings.NewReader(fmt.Sprintf("%s %s profile=if-mib community=%s timeout=%s retries=0\n", name, rl.conn.LocalAddr(), name, tmo)), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	return rl, ts
}

// TestDownDeviceLoggedOnChange: a device that stays down is logged when it
// goes down and when it comes back, not once a cycle; the cycles count it,
// and their problems are logged when they start and when they are over.
func TestDownDeviceLoggedOnChange(t *testing.T) {
	rl, ts := relayedDevice(t, "200ms")
	var logs logLines
	po := pollOptions()
	po.BackoffAfter = 100 // polled every cycle
	p, err := poller.New(po, ts, openSpool(t), &sink{}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if st := p.Cycle(context.Background()); st.Failed != 1 {
			t.Fatalf("a cycle of the down device: %+v", st)
		}
	}
	rl.up.Store(true)
	if st := p.Cycle(context.Background()); st.OK != 1 {
		t.Fatalf("the cycle after it came back: %+v\n%s", st, logs.String())
	}
	out := logs.String()
	for what, want := range map[string]int{`msg="device down"`: 1, `msg="discover tables"`: 1, `msg="device back"`: 1, `msg="poll cycle problems"`: 1, `msg="poll cycle problems over"`: 1} {
		if got := strings.Count(out, what); got != want {
			t.Errorf("%s logged %d times over 4 cycles down and 1 up, want %d:\n%s", what, got, want, out)
		}
	}
}

// TestStoppedCycleIsNoOverrun: the devices of a cycle a stop cut short are
// counted as stopped, not as overrun, in the cycle's summary and in
// spoold_poller_last_cycle_devices alike.
func TestStoppedCycleIsNoOverrun(t *testing.T) {
	_, ts := relayedDevice(t, "5s") // down: the poll waits for its timeout
	p, err := poller.New(pollOptions(), ts, openSpool(t), &sink{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	st := p.Cycle(ctx)
	if st.Overrun != 0 || st.Stopped != 1 {
		t.Errorf("a cycle cut by a stop: overrun=%d stopped=%d, want 0 and 1", st.Overrun, st.Stopped)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(poller.NewCollector(func() poller.CycleStats { return st }))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() == "spoold_poller_last_cycle_devices" {
			for _, m := range mf.GetMetric() {
				got[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
			}
		}
	}
	if want := map[string]float64{"ok": 0, "failed": 0, "skipped": 0, "overrun": 0, "stopped": 1}; !maps.Equal(got, want) {
		t.Errorf("spoold_poller_last_cycle_devices by result: %v, want %v as the cycle counts", got, want)
	}
}

// logLines collects a logger's output.
type logLines struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestDownDeviceUnderRunLogsOnChange: under Run, a device down for several
// cycles, its first discovery retried until it is in backoff, then probed
// and sitting cycles out, logs each state once: down, the discovery's
// error, the cycles' problems (the same kinds each cycle it is polled,
// none while it sits out), and that its first discovery goes on beside
// the cycles.
func TestDownDeviceUnderRunLogsOnChange(t *testing.T) {
	_, ts := relayedDevice(t, "100ms")
	const cycles = 8
	var logs logLines
	po := pollOptions()
	po.Interval = 300 * time.Millisecond
	seen := make(chan poller.CycleStats, 64)
	po.OnCycle = func(st poller.CycleStats) { seen <- st }
	p, err := poller.New(po, ts, openSpool(t), &sink{}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	for n := 0; n < cycles; n++ {
		select {
		case st := <-seen:
			if st.OK != 0 {
				t.Fatalf("a cycle of the down device: %+v", st)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%d cycles in 30 s", n)
		}
	}
	cancel()
	<-done
	out := logs.String()
	for _, what := range []string{`msg="device down"`, `msg="discover tables"`, `msg="poll cycle problems"`, `msg="poll cycle problems over"`, `msg="first discovery takes longer`} {
		if got := strings.Count(out, what); got > 1 {
			t.Errorf("%s logged %d times over %d cycles of one device down, want once at most:\n%s", what, got, cycles, out)
		}
	}
}
