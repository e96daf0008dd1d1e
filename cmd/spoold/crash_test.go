package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/confine"
)

var (
	crashTrials    = flag.Int("crash-trials", 20, "SIGKILL trials of TestCrashTrials for each RRD fsync policy (make soak runs 300)")
	crashRRDFsyncs = flag.String("crash-rrd-fsync", "none", "the --rrd-fsync policies TestCrashTrials runs its trials with, comma-separated (make soak runs none,batch,always)")
)

const (
	crashDevices = 4
	crashPregen  = 150 // seconds of entries per device in the spool before the first start
)

// crashPhase is what the daemon was doing when it was killed, as its
// /status showed just before the SIGKILL.
type crashPhase int

const (
	phasePoll  crashPhase = iota // polling (and the writer's own timer)
	phaseLoad                    // the start-up loader was walking the spool
	phaseFlush                   // a POST /flush was running, or the writer had batches in flight
	numPhases
)

var phaseNames = [numPhases]string{"poll", "load", "flush"}

// crashArgs are the daemon's flags. A throttled loader takes seconds for the
// backlog, so a kill lands mid-walk; its write delay is short, so the new
// polls would be due for writing long before the walk indexed the older
// entries.
func crashArgs(r *ledgerRig, throttleLoader bool) []string {
	args := []string{"--admin-status-cache", "0"}
	if r.o.rrdFsync != "" {
		args = append(args, "--rrd-fsync", r.o.rrdFsync)
	}
	if throttleLoader {
		args = append(args, "--loader-files", "1", "--loader-sleep", "200ms", "--write-delay", "100ms", "--write-jitter", "0")
	} else {
		args = append(args, "--loader-sleep", "0", "--write-delay", "2s", "--write-jitter", "1s")
	}
	return r.args(append(args, traceArgs...)...)
}

func loaderDone(st map[string]any) bool {
	l, _ := st["loader"].(map[string]any)
	return l != nil && l["running"] == false && num(st, "loader", "progress") == 1
}

// crashTrial starts a daemon, lets it work in the way the phase asks for a
// random 50 to 1500 ms, and kills it with SIGKILL. It returns the phase the
// daemon was in: the start-up walk or the writer's batches in flight as
// /status showed them just before the kill, or a POST /flush sent and not
// yet answered at the kill. The trial's trace goes into tr.
func crashTrial(t *testing.T, r *ledgerRig, want crashPhase, rng *rand.Rand, tr *crashTrace) crashPhase {
	t.Helper()
	r.ledger.trial.Store(int32(len(tr.trials)))
	p := startDaemon(t, crashArgs(r, want == phaseLoad)...)
	defer func() { <-p.logged; tr.add(t, r, p.stderr.String()) }()
	delay := 50*time.Millisecond + time.Duration(rng.Int64N(int64(1450*time.Millisecond)))
	if want != phaseLoad {
		p.waitFor(t, "the loader to finish", loaderDone)
	}
	time.Sleep(delay)
	got := phasePoll
	if want == phaseFlush {
		f := startFlush(t, p)
		time.Sleep(time.Duration(rng.Int64N(int64(3 * time.Millisecond))))
		if f.open() {
			got = phaseFlush
		}
		p.stop(t, syscall.SIGKILL)
		<-f.done
		return got
	}
	st := p.status(t)
	switch {
	case !loaderDone(st):
		got = phaseLoad
	case num(st, "writer", "in_flight") > 0:
		got = phaseFlush
	}
	p.stop(t, syscall.SIGKILL)
	return got
}

// flushCall is a POST /flush in flight.
type flushCall struct{ sent, done chan struct{} }

// startFlush sends POST /flush and returns once the request is written.
func startFlush(t *testing.T, p *daemonProc) *flushCall {
	t.Helper()
	f := &flushCall{sent: make(chan struct{}), done: make(chan struct{})}
	req, err := http.NewRequest(http.MethodPost, p.admin+"/flush", nil)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { once.Do(func() { close(f.sent) }) }}
	go func() {
		defer close(f.done)
		resp, err := http.DefaultClient.Do(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
		if err == nil {
			resp.Body.Close()
		}
		once.Do(func() { close(f.sent) })
	}()
	<-f.sent
	return f
}

// open reports whether the flush has not been answered yet.
func (f *flushCall) open() bool {
	select {
	case <-f.done:
		return false
	default:
		return true
	}
}

// drain runs a last daemon until its loader is done and stops it with
// SIGTERM, which flushes everything pending; its trace goes into tr.
func drain(t *testing.T, r *ledgerRig, tr *crashTrace) {
	t.Helper()
	r.ledger.trial.Store(int32(len(tr.trials)))
	p := startDaemon(t, crashArgs(r, false)...)
	defer func() { <-p.logged; tr.add(t, r, p.stderr.String()) }()
	p.waitFor(t, "the loader to finish", loaderDone)
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("the draining daemon exited with %v:\n%s", err, p.stderr)
	}
	// Every trial runs with the default --landlock: confined where the
	// kernel can confine.
	if confine.Probe(true).Mode == confine.Enforced && !strings.Contains(p.stderr.String(), `landlock="enforced`) {
		t.Errorf("the daemon ran unconfined on a kernel with Landlock:\n%s", p.stderr)
	}
	if left := spoolEntries(t, r.dir); len(left) != 0 {
		t.Logf("the draining daemon's warnings:\n%s", warnings(p.stderr.String()))
	}
}

// TestCrashTrials kills spoold with SIGKILL at random moments while it
// polls, loads its spool and flushes, restarts it each time, drains it, and
// checks every entry ever published into the spool against the RRD files,
// read with the rrdtool command: each entry's values are in its file
// (its own row holds its own value), or the entry is in quarantine.
// -crash-trials sets the number of kills, -crash-rrd-fsync the
// --rrd-fsync policies (each its own trials and rig).
func TestCrashTrials(t *testing.T) {
	requireRRDTool(t)
	if testing.Short() {
		t.Skip("crash trials start a daemon per trial")
	}
	for _, policy := range strings.Split(*crashRRDFsyncs, ",") {
		t.Run("rrd-fsync="+policy, func(t *testing.T) { runCrashTrials(t, policy) })
	}
}

func runCrashTrials(t *testing.T, rrdFsync string) {
	r := newLedgerRig(t, t.TempDir(), rigOptions{devices: crashDevices, pregen: crashPregen, precreate: true, rrdFsync: rrdFsync})
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 6))
	var hits [numPhases]int
	tr := &crashTrace{}
	for i := range *crashTrials {
		hits[crashTrial(t, r, crashPhase(i%int(numPhases)), rng, tr)]++
	}
	drain(t, r, tr)
	r.ledger.stop()
	if left := spoolEntries(t, r.dir); len(left) != 0 {
		t.Errorf("%d entries left in the spool after the draining shutdown", len(left))
	}
	v := r.verify(t)
	t.Logf("crash: phases at the kill: poll=%d load=%d flush=%d; entries published=%d (values read %d), rrd rows checked=%d",
		hits[phasePoll], hits[phaseLoad], hits[phaseFlush], v.published, v.published-v.unread, v.checked)
	fmt.Printf("crash: rrd_fsync=%s trials=%d lost=%d doubled=%d quarantined=%d\n", rrdFsync, *crashTrials, v.lost, v.doubled, v.quarantined)
	tr.report(t, r, "lost", v.lostRefs)
	tr.report(t, r, "doubled", v.doubledRefs)
	tr.report(t, r, "quarantined", v.quarantinedRefs)
	if v.lost != 0 || v.doubled != 0 || v.quarantined != 0 || v.badRates != 0 {
		t.Errorf("lost=%d doubled=%d quarantined=%d rates off=%d", v.lost, v.doubled, v.quarantined, v.badRates)
	}
	if *crashTrials >= 20 && (hits[phaseLoad] == 0 || hits[phaseFlush] == 0) {
		t.Errorf("no kill landed in some phase: poll=%d load=%d flush=%d", hits[phasePoll], hits[phaseLoad], hits[phaseFlush])
	}
}

// TestSIGTERMDuringTheStartupWalk stops spoold while a throttled start-up
// walk (1 entry per second: 10 minutes for the backlog) has indexed almost
// nothing: the walk finishes unthrottled, the shutdown flush writes the
// backlog and the new polls, and every entry is in its RRD file.
func TestSIGTERMDuringTheStartupWalk(t *testing.T) {
	requireRRDTool(t)
	r := newLedgerRig(t, t.TempDir(), rigOptions{devices: crashDevices, pregen: crashPregen, precreate: true})
	p := startDaemon(t, r.args("--loader-files", "1", "--loader-sleep", "1s", "--write-delay", "0s", "--write-jitter", "0")...)
	p.waitFor(t, "a poll cycle", func(st map[string]any) bool { return num(st, "last_cycle", "seq") >= 1 })
	if st := p.status(t); loaderDone(st) {
		t.Fatalf("the throttled walk is already done: %v", st["loader"])
	}
	stopAndVerify(t, r, p)
}

// stopAndVerify stops p with SIGTERM (its shutdown flush drains the
// spool) and checks every entry of the ledger in its RRD file.
func stopAndVerify(t *testing.T, r *ledgerRig, p *daemonProc) {
	t.Helper()
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.stderr)
	}
	r.ledger.stop()
	if left := spoolEntries(t, r.dir); len(left) != 0 {
		t.Fatalf("%d entries left in the spool", len(left))
	}
	if v := r.verify(t); v.lost != 0 || v.doubled != 0 || v.quarantined != 0 || v.checked < crashDevices*crashPregen {
		t.Fatalf("lost=%d doubled=%d quarantined=%d checked=%d", v.lost, v.doubled, v.quarantined, v.checked)
	}
}

// TestFullIndexLosesNothing starts spoold on a backlog 10 times larger than
// its index (--keys-zone 1k) while it keeps polling: the walk and the poller
// are refused again and again, the writer frees room, early rescans index
// the rest. A target with a refused (older) entry on disk is held, so no
// newer entry of it is written first. A second start with room drains the
// spool; the ledger then finds every entry in its RRD file.
func TestFullIndexLosesNothing(t *testing.T) {
	requireRRDTool(t)
	r := newLedgerRig(t, t.TempDir(), rigOptions{devices: crashDevices, pregen: crashPregen, precreate: true})
	p := startDaemon(t, r.args("--keys-zone", "1k", "--write-delay", "0s", "--write-jitter", "0")...)
	st := p.waitFor(t, "refusals, held targets and 12 poll cycles (an early rescan)", func(st map[string]any) bool {
		return num(st, "index", "full") > 0 && num(st, "last_cycle", "seq") >= 12
	})
	t.Logf("first run: index %v", st["index"])
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.stderr)
	}
	p2 := startDaemon(t, r.args()...)
	p2.waitFor(t, "the walk", func(st map[string]any) bool { return loaderDone(st) })
	stopAndVerify(t, r, p2)
}
