package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/simulate"
	"github.com/spoold/spoold/spool"
)

// The restart warm-up against the real daemon: a spool seeded
// with segments of old polls of a simulated fleet, so every entry is due
// at once under the default write delay and jitter (30m + up to 15m from
// the poll time), walked by a loader throttled to one file per 200 ms: the
// walk takes many minutes, and the tests look at the daemon while it runs.
const (
	warmupDevices = 1000
	warmupEntries = 4 // per target, warmupStep apart
	warmupPerSeg  = 2 // entries per seeded segment: two segments per target
	warmupStep    = 300
	// warmupAge is how long before the daemon's start the first entry of
	// every target was polled: all of them older than delay + jitter.
	warmupAge      = 3 * time.Hour
	warmupProfiles = `profile warmup
  ds up  ` + oidUptime + `     GAUGE   0
  ds in1 ` + oidInOctets1 + ` COUNTER 0
`
)

// warmupRig is a seeded spool, an RRD directory and a targets file for a
// simulated fleet polled every 5 minutes (one poll cycle at the start).
type warmupRig struct {
	sim                 *simulate.Simulator
	dir, targets, profs string
	layout              spool.Levels
	first               int64 // poll time of every target's first entry, a step boundary
}

func newWarmupRig(t *testing.T) *warmupRig {
	t.Helper()
	requireRRDTool(t)
	r := &warmupRig{sim: startSimulator(t, warmupDevices), dir: t.TempDir()}
	r.targets = writeTargets(t, r.sim, "warmup")
	r.profs = filepath.Join(t.TempDir(), "profiles.conf")
	if err := os.WriteFile(r.profs, []byte(warmupProfiles), 0o640); err != nil {
		t.Fatal(err)
	}
	so := spool.DefaultOptions()
	so.Dir, so.SegmentMaxEntries = filepath.Join(r.dir, "spool"), warmupPerSeg
	sp, err := spool.Open(so)
	if err != nil {
		t.Fatal(err)
	}
	r.layout = sp.Levels()
	r.first = time.Now().Add(-warmupAge).Unix() / warmupStep * warmupStep
	fl := r.sim.Fleet()
	for i := range fl.Len() {
		for k := range warmupEntries {
			e := spool.Entry{Key: fl.Name(i), Time: r.first + int64(k)*warmupStep, Values: []spool.Value{
				{Name: "up", Type: spool.Gauge, Gauge: seededUp(i, k)},
				{Name: "in1", Type: spool.Counter, Counter: uint64(k * warmupStep * (i + 1))},
			}}
			if _, _, err := sp.Append(&e); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(spoolEntries(t, r.dir)); n != warmupDevices*warmupEntries/warmupPerSeg {
		t.Fatalf("seeded %d segments, want %d", n, warmupDevices*warmupEntries/warmupPerSeg)
	}
	return r
}

// seededUp is the GAUGE value of device i's k-th seeded entry: distinct
// for every entry, so a row tells which entry filled it. in1 grows by
// (i+1) per second.
func seededUp(i, k int) float64 { return float64(1_000_000 + 100*i + k) }

// args start the daemon on the rig with the throttled walk: one file per
// iteration, 200 ms pauses; the write delay and jitter are the defaults.
func (r *warmupRig) args(extra ...string) []string {
	return append([]string{
		"--spool-dir", filepath.Join(r.dir, "spool"), "--rrd-dir", filepath.Join(r.dir, "rrd"),
		"--targets", r.targets, "--profiles", r.profs, "--admin-listen", "127.0.0.1:0",
		"--poll-interval", "5m", "--poll-timeout", "1s", "--shutdown-timeout", "1m",
		"--admin-status-cache", "0", "--loader-files", "1", "--loader-sleep", "200ms",
		"--log-level", "info",
	}, extra...)
}

func (r *warmupRig) leaf(i int) int {
	return r.layout.LeafIndex(spool.KeyHash(r.sim.Fleet().Name(i)))
}

// byLeaf returns the device in the lowest leaf directory and the one in
// the highest: the walk, in sorted order, reaches them first and last.
func (r *warmupRig) byLeaf() (early, late int) {
	for i := range r.sim.Fleet().Len() {
		if r.leaf(i) < r.leaf(early) {
			early = i
		}
		if r.leaf(i) > r.leaf(late) {
			late = i
		}
	}
	return early, late
}

func (r *warmupRig) rrdFile(i int) string {
	return filepath.Join(r.dir, "rrd", r.sim.Fleet().Name(i)+".rrd")
}

// seededRowsErr reads device i's RRD file with the rrdtool command and
// returns nil if every step after the first seeded poll holds its seeded
// entry: up exactly, in1 at the rate of (i+1) per second.
func (r *warmupRig) seededRowsErr(t *testing.T, i int) error {
	t.Helper()
	file := r.rrdFile(i)
	if _, err := os.Stat(file); err != nil {
		return err
	}
	last := r.first + (warmupEntries-1)*warmupStep
	cols, rows := fetchRows(t, file, warmupStep, r.first, last)
	up, in1 := slices.Index(cols, "up"), slices.Index(cols, "in1")
	if up < 0 || in1 < 0 {
		return fmt.Errorf("%s: columns %q, want up and in1", file, cols)
	}
	for k := 1; k < warmupEntries; k++ {
		ts := r.first + int64(k)*warmupStep
		row, ok := rows[ts]
		switch {
		case !ok:
			return fmt.Errorf("%s: no row at %d", file, ts)
		case row[up] != seededUp(i, k):
			return fmt.Errorf("%s at %d: up %v, seeded %v", file, ts, row[up], seededUp(i, k))
		case math.Abs(row[in1]-float64(i+1)) > 1e-6*float64(i+1):
			return fmt.Errorf("%s at %d: in1 rate %v, seeded %d", file, ts, row[in1], i+1)
		}
	}
	return nil
}

// waitSeeded waits, with a deadline, until device i's RRD file holds its
// seeded entries.
func (r *warmupRig) waitSeeded(t *testing.T, p *daemonProc, i int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := r.seededRowsErr(t, i)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("device %d's RRD file does not hold its seeded entries: %v\n%s", i, err, p.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// warmupState is the warm-up as /status shows it.
type warmupState struct {
	running          bool
	ready, total     int
	onDemand         int
	complete, walked bool
}

func warmupOf(st map[string]any) warmupState {
	l, _ := st["loader"].(map[string]any)
	w, _ := l["warmup"].(map[string]any)
	return warmupState{
		running: l["running"] == true, ready: int(num(st, "loader", "warmup", "leaves_ready")),
		total: int(num(st, "loader", "warmup", "leaves_total")), onDemand: int(num(st, "loader", "warmup", "leaves_walked_on_demand")),
		complete: w["complete"] == true, walked: loaderDone(st),
	}
}

// TestWarmupGraphDuringThrottledWalk: a graph of a target whose leaf the
// throttled start-up walk has not reached answers at once with a PNG (its
// leaf walked on demand), while the walk goes on; the target's RRD file
// then holds its seeded entries.
func TestWarmupGraphDuringThrottledWalk(t *testing.T) {
	r := newWarmupRig(t)
	_, late := r.byLeaf()
	p := startDaemon(t, r.args()...)
	st := p.waitFor(t, "the start-up walk to begin", func(st map[string]any) bool {
		return warmupOf(st).running && num(st, "loader", "files") >= 1
	})
	if w := warmupOf(st); w.ready >= r.leaf(late) || w.complete {
		t.Fatalf("the walk already passed leaf %d of device %d: %+v", r.leaf(late), late, w)
	}
	client := &http.Client{Timeout: 20 * time.Second}
	start := time.Now()
	resp, err := client.Get(p.admin + "/graph/" + r.sim.Fleet().Name(late) + ".png")
	if err != nil {
		t.Fatalf("graph during the walk: %v\n%s", err, p.stderr)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/png" || !bytes.HasPrefix(body, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("graph during the walk: %s %q, %d bytes: %.200q", resp.Status, resp.Header.Get("Content-Type"), len(body), body)
	}
	w := warmupOf(p.status(t))
	if !w.running || w.complete || w.walked || w.ready >= w.total {
		t.Fatalf("the walk is over after the graph: %+v; the graph waited for it (%s)", w, took)
	}
	if w.onDemand < 1 {
		t.Fatalf("the graph walked no leaf on demand: %+v", w)
	}
	t.Logf("graph of %s (leaf %d) in %s; warm-up %d/%d leaves, %d on demand", r.sim.Fleet().Name(late), r.leaf(late), took, w.ready, w.total, w.onDemand)
	if err := r.seededRowsErr(t, late); err != nil {
		t.Fatal(err)
	}
}

// TestWarmupWritesWalkedLeavesDuringTheWalk: once the throttled walk is
// past the leaf of a target, the writer writes that target's backlog
// while the walk goes on, and a target in a leaf not walked yet stays
// unwritten.
func TestWarmupWritesWalkedLeavesDuringTheWalk(t *testing.T) {
	r := newWarmupRig(t)
	early, late := r.byLeaf()
	p := startDaemon(t, r.args()...)
	p.waitFor(t, fmt.Sprintf("the walk past leaf %d", r.leaf(early)), func(st map[string]any) bool {
		return warmupOf(st).ready > r.leaf(early)
	})
	r.waitSeeded(t, p, early)
	_, lateErr := os.Stat(r.rrdFile(late)) // before the status: its leaf is ready no earlier
	w := warmupOf(p.status(t))
	if !w.running || w.complete || w.ready >= r.leaf(late) {
		t.Fatalf("the walk is past leaf %d already: %+v", r.leaf(late), w)
	}
	if !os.IsNotExist(lateErr) {
		t.Fatalf("device %d in leaf %d, not walked yet, has an RRD file: %v", late, r.leaf(late), lateErr)
	}
	t.Logf("device %d (leaf %d) written during the walk at %d/%d leaves", early, r.leaf(early), w.ready, w.total)
}

// TestWarmupShownInStatusAndMetrics: /status and /metrics show the
// leaves ready growing during the walk and the warm-up complete at its
// end (the throttle lifted with POST /loader so the end comes soon).
func TestWarmupShownInStatusAndMetrics(t *testing.T) {
	r := newWarmupRig(t)
	p := startDaemon(t, r.args()...)
	first := warmupOf(p.waitFor(t, "leaves ready", func(st map[string]any) bool {
		w := warmupOf(st)
		return w.running && w.ready >= 1
	}))
	m := warmupMetrics(t, p)
	if first.complete || m["spoold_warmup_complete"] != 0 || m["spoold_warmup_leaves"] != float64(r.layout.LeafDirs()) || m["spoold_warmup_leaves_ready"] >= m["spoold_warmup_leaves"] {
		t.Fatalf("during the walk: status %+v, metrics %v", first, m)
	}
	p.waitFor(t, "more leaves ready", func(st map[string]any) bool {
		w := warmupOf(st)
		if w.complete {
			t.Fatalf("the throttled walk completed early: %+v", w)
		}
		return w.ready > first.ready
	})
	resp, err := http.Post(p.admin+"/loader", "application/x-www-form-urlencoded", strings.NewReader("loader_sleep=0s"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /loader loader_sleep=0s: %s", resp.Status)
	}
	end := warmupOf(p.waitFor(t, "the warm-up to complete", func(st map[string]any) bool { return warmupOf(st).complete }))
	if !end.walked || end.ready != end.total || end.total != r.layout.LeafDirs() {
		t.Fatalf("warm-up complete: %+v", end)
	}
	m = warmupMetrics(t, p)
	if m["spoold_warmup_complete"] != 1 || m["spoold_warmup_leaves_ready"] != float64(r.layout.LeafDirs()) {
		t.Fatalf("metrics after the walk: %v", m)
	}
}

// warmupMetrics returns the spoold_warmup_ series of /metrics.
func warmupMetrics(t *testing.T, p *daemonProc) map[string]float64 {
	t.Helper()
	all, err := parseMetrics(string(get(t, p.admin+"/metrics")))
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]float64{}
	for name, v := range all {
		if strings.HasPrefix(name, "spoold_warmup_") {
			m[name] = v
		}
	}
	for _, name := range []string{"spoold_warmup_leaves_ready", "spoold_warmup_leaves", "spoold_warmup_complete"} {
		if _, ok := m[name]; !ok {
			t.Fatalf("/metrics lacks %s: %v", name, m)
		}
	}
	return m
}
