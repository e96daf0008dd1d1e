package main

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/simulate"
	"github.com/spoold/spoold/spool"
)

// The ledger rig's profile: sysUpTime as a GAUGE, whose value differs at
// every poll, so each RRD row tells which entry filled it (a lost entry
// leaves its row to the next entry's value), and one Counter64 whose rate
// is known.
const (
	rigRRARows   = 20000
	oidUptime    = "1.3.6.1.2.1.1.3.0"
	oidInOctets1 = "1.3.6.1.2.1.31.1.1.1.6.1"
	rigProfiles  = `profile crash
  ds up  ` + oidUptime + `     GAUGE   0
  ds in1 ` + oidInOctets1 + ` COUNTER 0
`
)

// rigOptions shape a ledger rig.
type rigOptions struct {
	devices int
	// pregen is the seconds of entries per device written into the spool
	// before the first start (a backlog for the loader).
	pregen int64
	// precreate makes the RRD files with the rrdtool command, with a
	// heartbeat of a day; else the daemon creates them (heartbeat 2 steps).
	precreate bool
	// rrdFsync is the daemons' --rrd-fsync ("": the default).
	rrdFsync string
}

// ledgerRig is a spool and RRD directory polled from a simulated fleet by
// daemons that are killed or starved of disk, with a ledger of every entry
// published into the spool.
type ledgerRig struct {
	o                   rigOptions
	sim                 *simulate.Simulator
	dir, targets, profs string
	ledger              *spoolLedger
	start               int64 // the RRD files accept updates after start
}

// newLedgerRig sets up dir/spool (precreated) and dir/rrd, which may be
// mount points already.
func newLedgerRig(t *testing.T, dir string, o rigOptions) *ledgerRig {
	t.Helper()
	r := &ledgerRig{o: o, sim: startSimulator(t, o.devices), dir: dir}
	r.targets = writeTargets(t, r.sim, "crash")
	r.profs = filepath.Join(t.TempDir(), "profiles.conf")
	if err := os.WriteFile(r.profs, []byte(rigProfiles), 0o640); err != nil {
		t.Fatal(err)
	}
	so := spool.DefaultOptions()
	so.Dir, so.PrecreateDirs = filepath.Join(r.dir, "spool"), true
	sp, err := spool.Open(so)
	if err != nil {
		t.Fatal(err)
	}
	r.ledger = watchSpool(t, so.Dir)
	first := time.Now().Unix() - o.pregen - 5
	r.start = first - 1
	if err := os.MkdirAll(filepath.Join(r.dir, "rrd"), 0o750); err != nil {
		t.Fatal(err)
	}
	if o.precreate {
		r.createRRDs(t)
	}
	r.pregenerate(t, sp, first)
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	return r
}

// createRRDs makes each device's RRD file with the rrdtool command, as an
// operator may: step 1 s like the poll interval, and a heartbeat of a day,
// so a row after a kill's gap is known and holds the entry that ended it.
func (r *ledgerRig) createRRDs(t *testing.T) {
	t.Helper()
	for i := range r.o.devices {
		out, err := exec.Command("rrdtool", "create", r.rrdFile(i), "--step", "1",
			"--start", strconv.FormatInt(r.start, 10), "DS:up:GAUGE:86400:0:U", "DS:in1:COUNTER:86400:0:U",
			"RRA:AVERAGE:0.5:1:"+strconv.Itoa(rigRRARows)).CombinedOutput()
		if err != nil {
			t.Fatalf("rrdtool create: %v\n%s", err, out)
		}
	}
}

// pregenerate writes o.pregen seconds of the simulator's true values per
// device, from first on.
func (r *ledgerRig) pregenerate(t *testing.T, sp *spool.Spool, first int64) {
	t.Helper()
	fl := r.sim.Fleet()
	for i := range r.o.devices {
		for ts := first; ts < first+r.o.pregen; ts++ {
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

func (r *ledgerRig) rrdFile(i int) string {
	return filepath.Join(r.dir, "rrd", r.sim.Fleet().Name(i)+".rrd")
}

// args are the daemon's flags for the rig: 1 s polls, then extra.
func (r *ledgerRig) args(extra ...string) []string {
	return append([]string{
		"--spool-dir", filepath.Join(r.dir, "spool"), "--rrd-dir", filepath.Join(r.dir, "rrd"),
		"--targets", r.targets, "--profiles", r.profs, "--admin-listen", "127.0.0.1:0",
		"--poll-interval", "1s", "--poll-timeout", "500ms", "--shutdown-timeout", "1m",
		"--log-level", "info",
	}, extra...)
}

// heartbeat is the RRD files' heartbeat in seconds.
func (r *ledgerRig) heartbeat() int64 {
	if r.o.precreate {
		return 86400
	}
	return 2
}

type ledgerVerdict struct {
	published, unread, checked, afterGap int
	lost, doubled, quarantined, badRates int
	// lostRefs, doubledRefs and quarantinedRefs are the entries counted
	// lost, doubled and quarantined.
	lostRefs, doubledRefs, quarantinedRefs []spool.Ref
}

func (v *ledgerVerdict) lose(r spool.Ref) {
	v.lost++
	v.lostRefs = append(v.lostRefs, r)
}

func (v *ledgerVerdict) double(r spool.Ref) {
	v.doubled++
	v.doubledRefs = append(v.doubledRefs, r)
}

// verify compares the ledger with the RRD files, read with the rrdtool
// command. An entry is lost if its row is unknown or holds a later entry's
// value; doubled if its row holds an earlier entry's value (an old entry
// applied again at a later time). The row of an entry more than a
// heartbeat after the one before is unknown by RRD rules; the entry after
// it checks that it was applied (else its own row would be unknown too).
func (r *ledgerRig) verify(t *testing.T) ledgerVerdict {
	t.Helper()
	entries, unread, overflow := r.ledger.snapshot()
	if overflow {
		t.Fatal("inotify dropped events: the ledger of published entries is incomplete")
	}
	quarantined := r.quarantined(t)
	var v ledgerVerdict
	for i := range r.o.devices {
		hash := spool.KeyHash(r.sim.Fleet().Name(i))
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
		dv := deviceVerify{r: r, i: i, hash: hash, times: times, entries: entries, unread: unread, v: &v}
		dv.cols, dv.rows = fetchRows(t, r.rrdFile(i), 1, r.start, time.Now().Unix())
		for k := range times {
			if quarantined[spool.Ref{Hash: hash, Time: times[k]}] {
				v.published++
				v.quarantined++
				v.quarantinedRefs = append(v.quarantinedRefs, spool.Ref{Hash: hash, Time: times[k]})
				continue
			}
			dv.check(t, k)
		}
	}
	return v
}

// deviceVerify checks one device's entries against its RRD rows.
type deviceVerify struct {
	r       *ledgerRig
	i       int
	hash    uint64
	times   []int64
	entries map[spool.Ref][]spool.Entry
	unread  map[spool.Ref]bool
	cols    []string
	rows    map[int64][]float64
	v       *ledgerVerdict
}

// rowIsMine reports whether val can be the row of the entry in second
// times[k]: the GAUGE up only grows, and the step (ts-1, ts] holds the
// entry's value and, for the part before the entry polled last before it
// (if that poll was in the same step), that poll's value, which is at
// least the uptime at ts-1. A lost entry would leave its step to the next
// poll's larger value; an entry applied twice cannot be (librrd refuses an
// older time).
func (d *deviceVerify) rowIsMine(k int, val float64) bool {
	ts := d.times[k]
	lo := float64(d.r.sim.Fleet().Value(d.i, oidUptime, time.Unix(ts-1, 0)).Value.(uint32))
	for _, e := range d.entries[spool.Ref{Hash: d.hash, Time: ts}] {
		if up, ok := upOf(&e); ok && val >= lo-2 && val <= up+1 {
			return true
		}
	}
	return false
}

// upOf returns the entry's value of up.
func upOf(e *spool.Entry) (float64, bool) {
	for _, x := range e.Values {
		if x.Name == "up" {
			return x.Gauge, true
		}
	}
	return 0, false
}

// pollTime is the poll time of the device's entry in second ts, in
// seconds with its milliseconds (ts itself if the entry was not read).
func (d *deviceVerify) pollTime(ts int64) float64 {
	for _, e := range d.entries[spool.Ref{Hash: d.hash, Time: ts}] {
		return float64(ts) + float64(e.Milli)/1000
	}
	return float64(ts)
}

func (d *deviceVerify) check(t *testing.T, k int) {
	t.Helper()
	v, ts, name := d.v, d.times[k], d.r.sim.Fleet().Name(d.i)
	ref := spool.Ref{Hash: d.hash, Time: ts}
	v.published++
	// An entry polled longer than the heartbeat after the one before (in
	// poll times to the millisecond, as librrd sees them) makes the time
	// in between unknown: its row is not checked. librrd counts unknown
	// time in whole seconds, so the part of the unknown time in the step
	// of that entry's poll counts as known time without a value; the next
	// entry's update closes that step and every step up to its own poll
	// with one average over all of them, too low. So the row of the entry
	// after it is not checked either, however many seconds later it came
	// (a poll answered late, after a retry, comes 2 s later).
	unknownBefore := func(j int) bool {
		return j > 0 && d.pollTime(d.times[j])-d.pollTime(d.times[j-1]) > float64(d.r.heartbeat())
	}
	if unknownBefore(k) || unknownBefore(k-1) {
		v.afterGap++
		return
	}
	up, in1 := slices.Index(d.cols, "up"), slices.Index(d.cols, "in1")
	row, ok := d.rows[ts]
	switch {
	case !ok || math.IsNaN(row[up]):
		v.lose(ref)
		t.Errorf("%s: entry %s: its row is unknown", name, ref)
		return
	case d.unread[ref] || (k > 0 && d.times[k-1] == ts-1 && d.unread[spool.Ref{Hash: d.hash, Time: ts - 1}]):
		// Its value, or the value of the poll before it in the same
		// step, is not known to the ledger: the row must be the uptime
		// around the poll.
		v.unread++
		if !d.r.uptimeMatches(d.i, ts, row[up]) {
			v.lose(ref)
			t.Errorf("%s: entry %s (not read): row value %.0f is not the uptime at its poll", name, ref, row[up])
		}
	case d.rowIsMine(k, row[up]):
	default:
		defer d.logNeighbours(t, k)
		switch d.rowOwner(k, row[up]) {
		case 1:
			v.lose(ref)
			t.Errorf("%s: entry %s: its row holds a later entry's value %.0f", name, ref, row[up])
		case -1:
			v.double(ref)
			t.Errorf("%s: entry %s: its row holds an earlier entry's value %.0f", name, ref, row[up])
		default:
			v.lose(ref)
			t.Errorf("%s: entry %s: row value %.0f matches no entry", name, ref, row[up])

		}
	}
	v.checked++
	rate := truthRateOf(d.r.sim.Fleet(), d.i, oidInOctets1)
	if k > 0 && !rateWithin(row[in1], rate, ts-d.times[k-1]) {
		v.badRates++
		t.Errorf("%s at %d: in1 rate %.1f, simulator's truth %.1f over %d s", name, ts, row[in1], rate, ts-d.times[k-1])
	}
}

// logNeighbours logs the ledger's entries of the device around times[k]
// (their poll times and up values, or unread) beside the RRD rows of
// their seconds, for a failed check.
func (d *deviceVerify) logNeighbours(t *testing.T, k int) {
	t.Helper()
	up := slices.Index(d.cols, "up")
	for j := max(k-4, 0); j < min(k+3, len(d.times)); j++ {
		ts := d.times[j]
		ref := spool.Ref{Hash: d.hash, Time: ts}
		var polls []string
		for _, e := range d.entries[ref] {
			if up, ok := upOf(&e); ok {
				polls = append(polls, fmt.Sprintf("%d.%03d up=%.0f", e.Time, e.Milli, up))
			}
		}
		if d.unread[ref] {
			polls = append(polls, "unread")
		}
		row := "none"
		if r, ok := d.rows[ts]; ok {
			row = fmt.Sprintf("%.0f", r[up])
		}
		t.Logf("%s: second %d: entries %v; row up=%s; uptime at the second %v", d.r.sim.Fleet().Name(d.i), ts, polls, row,
			d.r.sim.Fleet().Value(d.i, oidUptime, time.Unix(ts, 0)).Value)
	}
}

// rowOwner says whose value a row of entry times[k] that is not its own
// holds (see rowIsMine): 1 a later entry's, -1 an earlier entry's, 2
// nobody's.
func (d *deviceVerify) rowOwner(k int, val float64) int {
	for j := k + 1; j < len(d.times); j++ {
		if d.rowIsMine(j, val) {
			return 1
		}
	}
	for j := range k {
		if d.rowIsMine(j, val) {
			return -1
		}
	}
	return 2
}

// uptimeMatches reports whether val is device i's uptime at a poll that
// ended in second ts (the answer left the simulator up to 2 s before).
func (r *ledgerRig) uptimeMatches(i int, ts int64, val float64) bool {
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
func (r *ledgerRig) quarantined(t *testing.T) map[spool.Ref]bool {
	t.Helper()
	q := map[spool.Ref]bool{}
	files, _ := os.ReadDir(filepath.Join(r.dir, "spool", spool.QuarantineDir))
	for _, f := range files {
		t.Logf("quarantine holds %s", f.Name())
		// <segment name>.[at<offset>.]<nanoseconds>[.reason]
		name, _, _ := strings.Cut(f.Name(), ".")
		ref, err := spool.ParseName(name)
		if strings.HasSuffix(f.Name(), ".reason") {
			if b, err := os.ReadFile(filepath.Join(r.dir, "spool", spool.QuarantineDir, f.Name())); err == nil {
				t.Logf("quarantine reason: %s", strings.ReplaceAll(string(b), "\n", "; "))
			}
			continue
		}
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(r.dir, "spool", spool.QuarantineDir, f.Name()))
		if err == nil && len(data) == 0 {
			continue // an empty segment (a kill between its creation and its first write) holds no entry
		}
		q[ref] = true
		if err == nil {
			for _, e := range spool.ParseSegment(ref, data).Entries {
				q[e.Ref()] = true // the entries in it, whatever their times
			}
		}
	}
	return q
}
