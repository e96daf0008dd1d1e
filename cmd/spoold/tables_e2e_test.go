package main

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/internal/testing/simtest"
	"github.com/spoold/spoold/simulate"
)

// TestRenumberedDeviceKeepsItsRRDFiles runs spoold with the if-mib profile
// against a simulated switch that renumbers its interfaces when it
// restarts, restarts it, and checks with the rrdtool command that each
// interface's file (named by its ifName) holds its own rates before and
// after: the rates continue, no spike, no gap beyond the restart, and no
// file is added.
func TestRenumberedDeviceKeepsItsRRDFiles(t *testing.T) {
	requireRRDTool(t)
	o := simulate.DefaultOptions()
	o.Devices, o.Interfaces, o.Numbering = 1, 8, simulate.Vendor
	sim := simtest.Serve(t, o)
	fl := sim.Fleet()
	fl.SetBehavior(0, simulate.Behavior{Renumber: true})
	f := &e2eFleet{sim: sim, targets: writeTargets(t, sim, "if-mib")}
	dir := t.TempDir()
	start := time.Now().Unix()
	p := startDaemon(t, daemonArgs(dir, f, "--write-delay", "3s", "--write-jitter", "0s")...)
	p.waitFor(t, "5 poll cycles", func(st map[string]any) bool { return num(st, "last_cycle", "seq") >= 5 })

	before := fl.Interfaces(0, time.Now())
	restart := time.Now()
	fl.Restart(0, restart)
	after := fl.Interfaces(0, time.Now())
	seq := num(p.status(t), "last_cycle", "seq")
	p.waitFor(t, "6 more poll cycles", func(st map[string]any) bool { return num(st, "last_cycle", "seq") >= seq+6 })
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("spoold exited with %v after SIGTERM:\n%s", err, p.stderr)
	}
	end := time.Now().Unix()

	files, _ := filepath.Glob(filepath.Join(dir, "rrd", fl.Name(0), "*.rrd"))
	if len(files) != len(after) {
		t.Errorf("%d interface files, the device has %d interfaces: %v", len(files), len(after), files)
	}
	tol := rateTolerance(t, p)
	renumbered := 0
	for _, ifc := range after {
		k := slices.IndexFunc(before, func(b simulate.Interface) bool { return b.Port == ifc.Port })
		if k < 0 || ifc.Name != before[k].Name {
			t.Fatalf("port %d (%s) is not the same interface before the restart", ifc.Port, ifc.Name)
		}
		if ifc.Index != before[k].Index {
			renumbered++
		}
		file := filepath.Join(dir, "rrd", fl.Name(0), fleet.InstanceSegment(ifc.Name)+".rrd")
		if _, err := os.Stat(file); err != nil {
			t.Fatalf("interface %s: %v", ifc.Name, err)
		}
		truth, ok := fl.Rate(0, "1.3.6.1.2.1.31.1.1.1.6."+strconv.Itoa(ifc.Index), time.Now())
		if !ok {
			t.Fatalf("no truth rate of %s", ifc.Name)
		}
		checkRenumberedRates(t, file, float64(truth), start, end, restart.Unix(), tol)
	}
	if renumbered == 0 {
		t.Fatal("the simulator renumbered no interface")
	}
}

// checkRenumberedRates checks one interface's "in" rows: known on both
// sides of the restart, unknown for at most 3 steps around it, each known
// row its true rate within tol (see rateTolerance; a row bordering unknown
// time: above 0 and at most 1.5 times it), never a spike.
func checkRenumberedRates(t *testing.T, file string, truth float64, start, end, restart int64, tol float64) {
	t.Helper()
	cols, rows := fetchRows(t, file, 2, start, end)
	col := slices.Index(cols, "in")
	var times []int64
	for ts := range rows {
		times = append(times, ts)
	}
	slices.Sort(times)
	known := func(ts int64) bool { v, ok := rows[ts]; return ok && !math.IsNaN(v[col]) }
	var gap, beforeN, afterN int
	for i, ts := range times {
		v := rows[ts][col]
		if math.IsNaN(v) {
			if beforeN > 0 && ts > restart-4 && ts < restart+10 {
				gap++
			}
			continue
		}
		if ts < restart {
			beforeN++
		} else {
			afterN++
		}
		// A row bordering unknown time (the restart's, or a poll late
		// beyond the heartbeat on a loaded machine) holds part of a step:
		// librrd counts the unknown time in whole seconds (see
		// checkRates), so it is below the rate; a spike would be far above.
		border := i == 0 || !known(times[i-1]) || i+1 < len(times) && !known(times[i+1])
		switch {
		case border && (v <= 0 || v > truth*1.5):
			t.Errorf("%s at %d (restart %d), next to unknown time: rate %.1f, truth %.1f", file, ts, restart, v, truth)
		case !border && math.Abs(v-truth) > truth*tol:
			t.Errorf("%s at %d (restart %d): rate %.1f, truth %.1f (tolerance %.2f%%)", file, ts, restart, v, truth, 100*tol)
		}
	}
	if beforeN < 2 || afterN < 2 || gap > 3 {
		t.Errorf("%s: %d rows before the restart, %d after, %d unknown around it (want >= 2, >= 2, <= 3)", file, beforeN, afterN, gap)
	}
}
