package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spoold/spoold/simulate"
	"github.com/spoold/spoold/spool"
)

var crashTrials = flag.Int("crash-trials", 20, "SIGKILL trials of TestCrashTrials (make soak runs 300)")

// The crash fleet's profile: sysUpTime as a GAUGE, whose value differs at
// every poll, so each RRD row tells which entry filled it (a lost entry
// leaves its row to the next entry's value), and one Counter64 whose rate
// is known.
const (
	crashDevices  = 4
	crashPregen   = 150 // seconds of entries per device in the spool before the first start
	crashRRARows  = 20000
	oidUptime     = "1.3.6.1.2.1.1.3.0"
	oidInOctets1  = "1.3.6.1.2.1.31.1.1.1.6.1"
	crashProfiles = `profile crash
  ds up  ` + oidUptime + `     GAUGE   0
  ds in1 ` + oidInOctets1 + ` COUNTER 0
`
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

// crashRig is a spool and RRD directory polled from a simulated fleet by
// daemons that are killed one after another.
type crashRig struct {
	sim                 *simulate.Simulator
	dir, targets, profs string
	ledger              *spoolLedger
	start               int64 // the RRD files accept updates after start
}

func newCrashRig(t *testing.T) *crashRig {
	t.Helper()
	r := &crashRig{sim: startSimulator(t, crashDevices), dir: t.TempDir()}
	r.targets = writeTargets(t, r.sim, "crash")
	r.profs = filepath.Join(r.dir, "profiles.conf")
	if err := os.WriteFile(r.profs, []byte(crashProfiles), 0o640); err != nil {
		t.Fatal(err)
	}
	so := spool.DefaultOptions()
	so.Dir, so.PrecreateDirs = filepath.Join(r.dir, "spool"), true
	sp, err := spool.Open(so)
	if err != nil {
		t.Fatal(err)
	}
	r.ledger = watchSpool(t, so.Dir)
	first := time.Now().Unix() - crashPregen - 5
	r.start = first - 1
	r.createRRDs(t)
	r.pregenerate(t, sp, first)
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	return r
}

// createRRDs makes each device's RRD file with the rrdtool command, as an
// operator may: step 1 s like the poll interval, and a heartbeat of a day,
// so a row after a kill's gap is known and holds the entry that ended it.
func (r *crashRig) createRRDs(t *testing.T) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(r.dir, "rrd"), 0o750); err != nil {
		t.Fatal(err)
	}
	for i := range crashDevices {
		out, err := exec.Command("rrdtool", "create", r.rrdFile(i), "--step", "1",
			"--start", strconv.FormatInt(r.start, 10), "DS:up:GAUGE:86400:0:U", "DS:in1:COUNTER:86400:0:U",
			"RRA:AVERAGE:0.5:1:"+strconv.Itoa(crashRRARows)).CombinedOutput()
		if err != nil {
			t.Fatalf("rrdtool create: %v\n%s", err, out)
		}
	}
}

// pregenerate writes crashPregen seconds of the simulator's true values
// per device, a backlog for the first loader runs to walk.
func (r *crashRig) pregenerate(t *testing.T, sp *spool.Spool, first int64) {
	t.Helper()
	fl := r.sim.Fleet()
	for i := range crashDevices {
		for ts := first; ts < first+crashPregen; ts++ {
			at := time.Unix(ts, 0)
			e := spool.Entry{Key: fl.Name(i), Time: ts, Values: []spool.Value{
				{Name: "up", Type: spool.Gauge, Gauge: float64(fl.Value(i, oidUptime, at).Value.(uint32))},
				{Name: "in1", Type: spool.Counter, Counter: fl.Value(i, oidInOctets1, at).Value.(uint64)},
			}}
			if _, err := sp.Write(&e); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func (r *crashRig) rrdFile(i int) string {
	return filepath.Join(r.dir, "rrd", r.sim.Fleet().Name(i)+".rrd")
}

// args are the daemon's flags. A throttled loader takes seconds for the
// backlog, so a kill lands mid-walk; its write delay is short, so the new
// polls would be due for writing long before the walk indexed the older
// entries.
func (r *crashRig) args(throttleLoader bool) []string {
	a := []string{
		"--spool-dir", filepath.Join(r.dir, "spool"), "--rrd-dir", filepath.Join(r.dir, "rrd"),
		"--targets", r.targets, "--profiles", r.profs, "--admin-listen", "127.0.0.1:0",
		"--poll-interval", "1s", "--poll-timeout", "500ms", "--shutdown-timeout", "1m",
		"--log-level", "info",
	}
	if throttleLoader {
		return append(a, "--loader-files", "2", "--loader-sleep", "100ms", "--write-delay", "100ms", "--write-jitter", "0")
	}
	return append(a, "--loader-sleep", "0", "--write-delay", "2s", "--write-jitter", "1s")
}

func (r *crashRig) startDaemon(t *testing.T, throttleLoader bool) *daemonProc {
	t.Helper()
	return startDaemon(t, r.args(throttleLoader)...)
}

func loaderDone(st map[string]any) bool {
	l, _ := st["loader"].(map[string]any)
	return l != nil && l["running"] == false && num(st, "loader", "progress") == 1
}

// trial starts a daemon, lets it work in the way the phase asks for a
// random 50 to 1500 ms, and kills it with SIGKILL. It returns the phase
// /status showed just before the kill.
func (r *crashRig) trial(t *testing.T, want crashPhase, rng *rand.Rand) crashPhase {
	t.Helper()
	p := r.startDaemon(t, want == phaseLoad)
	delay := 50*time.Millisecond + time.Duration(rng.Int64N(int64(1450*time.Millisecond)))
	var flushing sync.WaitGroup
	var flushOpen chan struct{}
	switch want {
	case phaseLoad:
		time.Sleep(delay)
	case phasePoll:
		p.waitFor(t, "the loader to finish", loaderDone)
		time.Sleep(delay)
	case phaseFlush:
		p.waitFor(t, "the loader to finish", loaderDone)
		time.Sleep(delay)
		flushOpen = make(chan struct{})
		flushing.Add(1)
		go func() {
			defer flushing.Done()
			defer close(flushOpen)
			if resp, err := http.Post(p.admin+"/flush", "", nil); err == nil {
				resp.Body.Close()
			}
		}()
		time.Sleep(time.Duration(rng.Int64N(int64(20 * time.Millisecond))))
	}
	got := phasePoll
	st := p.status(t)
	switch {
	case !loaderDone(st):
		got = phaseLoad
	case num(st, "writer", "in_flight") > 0:
		got = phaseFlush
	case flushOpen != nil:
		select {
		case <-flushOpen:
		default:
			got = phaseFlush
		}
	}
	p.stop(t, syscall.SIGKILL)
	flushing.Wait()
	return got
}

// drain runs a last daemon until its loader is done and stops it with
// SIGTERM, which flushes everything pending.
func (r *crashRig) drain(t *testing.T) {
	t.Helper()
	p := r.startDaemon(t, false)
	p.waitFor(t, "the loader to finish", loaderDone)
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("the draining daemon exited with %v:\n%s", err, p.stderr)
	}
}

// TestCrashTrials kills spoold with SIGKILL at random moments while it
// polls, loads its spool and flushes, restarts it each time, drains it, and
// checks every entry ever published into the spool against the RRD files,
// read with the rrdtool command: each entry's values are in its file
// (its own row holds its own value), or the entry is in quarantine.
// -crash-trials sets the number of kills.
func TestCrashTrials(t *testing.T) {
	requireRRDTool(t)
	if testing.Short() {
		t.Skip("crash trials start a daemon per trial")
	}
	r := newCrashRig(t)
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 6))
	var hits [numPhases]int
	for i := range *crashTrials {
		hits[r.trial(t, crashPhase(i%int(numPhases)), rng)]++
	}
	r.drain(t)
	r.ledger.stop()
	if left := spoolEntries(t, r.dir); len(left) != 0 {
		t.Errorf("%d entries left in the spool after the draining shutdown", len(left))
	}
	v := r.verify(t)
	t.Logf("crash: phases at the kill: poll=%d load=%d flush=%d; entries published=%d (values read %d), rrd rows checked=%d",
		hits[phasePoll], hits[phaseLoad], hits[phaseFlush], v.published, v.published-v.unread, v.checked)
	fmt.Printf("crash: trials=%d lost=%d doubled=%d quarantined=%d\n", *crashTrials, v.lost, v.doubled, v.quarantined)
	if v.lost != 0 || v.doubled != 0 || v.quarantined != 0 || v.badRates != 0 {
		t.Errorf("lost=%d doubled=%d quarantined=%d rates off=%d", v.lost, v.doubled, v.quarantined, v.badRates)
	}
	if *crashTrials >= 20 && (hits[phaseLoad] == 0 || hits[phaseFlush] == 0) {
		t.Errorf("no kill landed in some phase: poll=%d load=%d flush=%d", hits[phasePoll], hits[phaseLoad], hits[phaseFlush])
	}
}

type crashVerdict struct {
	published, unread, checked           int
	lost, doubled, quarantined, badRates int
}

// verify compares the ledger with the RRD files. An entry is lost if its
// row is unknown or holds a later entry's value; doubled if its row holds
// an earlier entry's value (an old entry applied again at a later time).
func (r *crashRig) verify(t *testing.T) crashVerdict {
	t.Helper()
	entries, unread, overflow := r.ledger.snapshot()
	if overflow {
		t.Fatal("inotify dropped events: the ledger of published entries is incomplete")
	}
	quarantined := r.quarantined(t)
	var v crashVerdict
	end := time.Now().Unix()
	fl := r.sim.Fleet()
	for i := range crashDevices {
		hash := spool.KeyHash(fl.Name(i))
		var times []int64
		for ref := range entries {
			if ref.Hash == hash {
				times = append(times, ref.Time)
			}
		}
		for ref := range unread {
			if ref.Hash == hash {
				times = append(times, ref.Time)
			}
		}
		slices.Sort(times)
		cols, rows := fetchRows(t, r.rrdFile(i), 1, r.start, end)
		up, in1 := slices.Index(cols, "up"), slices.Index(cols, "in1")
		rate := truthRateOf(fl, i, oidInOctets1)
		for k, ts := range times {
			ref := spool.Ref{Hash: hash, Time: ts}
			v.published++
			if quarantined[ref] {
				v.quarantined++
				continue
			}
			row, ok := rows[ts]
			switch {
			case !ok || math.IsNaN(row[up]):
				v.lost++
				t.Errorf("%s: entry %s: its row is unknown", fl.Name(i), ref)
				continue
			case unread[ref]:
				v.unread++
				if !r.uptimeMatches(i, ts, row[up]) {
					v.lost++
					t.Errorf("%s: entry %s (not read): row value %.0f is not the uptime at its poll", fl.Name(i), ref, row[up])
				}
			default:
				switch rowOwner(row[up], entries, hash, times, k) {
				case 0:
				case 1:
					v.lost++
					t.Errorf("%s: entry %s: its row holds a later entry's value %.0f", fl.Name(i), ref, row[up])
				case -1:
					v.doubled++
					t.Errorf("%s: entry %s: its row holds an earlier entry's value %.0f", fl.Name(i), ref, row[up])
				default:
					v.lost++
					t.Errorf("%s: entry %s: row value %.0f matches no entry", fl.Name(i), ref, row[up])
				}
			}
			v.checked++
			if k > 0 && !rateWithin(row[in1], rate, ts-times[k-1]) {
				v.badRates++
				t.Errorf("%s at %d: in1 rate %.1f, simulator's truth %.1f over %d s", fl.Name(i), ts, row[in1], rate, ts-times[k-1])
			}
		}
	}
	return v
}

// rowOwner says whose value a row of entry times[k] holds: 0 its own, 1 a
// later entry's, -1 an earlier entry's, 2 nobody's.
func rowOwner(val float64, entries map[spool.Ref][]spool.Entry, hash uint64, times []int64, k int) int {
	holds := func(ts int64) bool {
		for _, e := range entries[spool.Ref{Hash: hash, Time: ts}] {
			for _, x := range e.Values {
				if x.Name == "up" && math.Abs(x.Gauge-val) <= 1 {
					return true
				}
			}
		}
		return false
	}
	switch {
	case holds(times[k]):
		return 0
	case slices.ContainsFunc(times[k+1:], holds):
		return 1
	case slices.ContainsFunc(times[:k], holds):
		return -1
	}
	return 2
}

// uptimeMatches reports whether val is device i's uptime at a poll that
// ended in second ts (the answer left the simulator up to 2 s before).
func (r *crashRig) uptimeMatches(i int, ts int64, val float64) bool {
	fl := r.sim.Fleet()
	lo := float64(fl.Value(i, oidUptime, time.Unix(ts-2, 0)).Value.(uint32))
	hi := float64(fl.Value(i, oidUptime, time.Unix(ts+1, 0)).Value.(uint32))
	return val >= lo-1 && val <= hi+1
}

// rateWithin reports whether an RRD rate over a gap of gap seconds between
// entry times is the true rate within the 1 s granularity of entry times
// (plus half a second for the answer's time before the poll's end).
func rateWithin(got, truth float64, gap int64) bool {
	return !math.IsNaN(got) && math.Abs(got-truth) <= truth*1.5/float64(gap)
}

// truthRateOf is device i's true rate of a counter, from the simulator.
func truthRateOf(fl *simulate.Fleet, i int, oid string) float64 {
	t0 := fl.Now()
	v0 := fl.Value(i, oid, t0).Value.(uint64)
	v1 := fl.Value(i, oid, t0.Add(100*time.Second)).Value.(uint64)
	return float64(v1-v0) / 100
}

// quarantined returns the entry names in the spool's quarantine.
func (r *crashRig) quarantined(t *testing.T) map[spool.Ref]bool {
	t.Helper()
	q := map[spool.Ref]bool{}
	files, _ := os.ReadDir(filepath.Join(r.dir, "spool", spool.QuarantineDir))
	for _, f := range files {
		t.Logf("quarantine holds %s", f.Name())
		name, _, _ := strings.Cut(f.Name(), ".") // <entry name>.<nanoseconds>[.reason]
		if ref, err := spool.ParseName(name); err == nil {
			q[ref] = true
		}
	}
	return q
}
