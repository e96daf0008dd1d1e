package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/simtest"
	"github.com/spoold/spoold/simulate"
)

// TestRenamingDeviceCannotFillTheRRDDisk: an agent that looks restarted
// every 3 s (sysUpTime reset) and renames its 8 interfaces each time made
// 8 new RRD files per restart, without end. With --max-new-files-per-hour
// 8, the first discovery's 8 files and the first rename's 8 are made and
// kept, the later renames' rows are not polled (no file), and /status,
// /metrics and the page show the target as needing attention.
func TestRenamingDeviceCannotFillTheRRDDisk(t *testing.T) {
	const ifaces = 8
	o := simulate.DefaultOptions()
	o.Devices, o.Interfaces = 1, ifaces
	sim := simtest.Serve(t, o)
	sim.Fleet().SetBehavior(0, simulate.Behavior{Rename: true, RestartEvery: 3 * time.Second})
	f := &e2eFleet{sim: sim, targets: writeTargets(t, sim, "if-mib")}
	dir := t.TempDir()
	p := startDaemon(t, daemonArgs(dir, f, "--poll-interval", "1s", "--max-new-files-per-hour", "8",
		"--write-delay", "1s", "--write-jitter", "0s")...)
	files := func() int { return rowFiles(dir, sim.Fleet().Name(0)) }
	attention := func(st map[string]any) string {
		ts, _ := st["targets"].([]any)
		if len(ts) != 1 {
			return ""
		}
		s, _ := ts[0].(map[string]any)["attention"].(string)
		return s
	}
	st := p.waitFor(t, "the target needing attention", func(st map[string]any) bool { return attention(st) != "" })
	if a := attention(st); !strings.Contains(a, "8 table rows not polled") || !strings.Contains(a, "--max-new-files-per-hour") {
		t.Errorf("attention %q", a)
	}
	seq := num(st, "last_cycle", "seq")
	p.waitFor(t, "6 more cycles, two more renames", func(st map[string]any) bool { return num(st, "last_cycle", "seq") >= seq+6 })
	p.waitFor(t, "the 16 admitted rows' files", func(map[string]any) bool { return files() >= 2*ifaces })
	waitMetric(t, p, "spoold_poller_table_rows_over_limit 8")
	if page := string(get(t, p.admin+"/")); !strings.Contains(page, "Needs attention") || !strings.Contains(page, "table rows not polled") {
		t.Errorf("the page does not show the target as needing attention")
	}
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	if n := files(); n != 2*ifaces {
		t.Fatalf("%d RRD files of the renaming device, want the 16 of its first two names (the bound)", n)
	}
}

// rowFiles counts the RRD files of target's table rows in the daemon's
// --rrd-dir under dir.
func rowFiles(dir, target string) int {
	m, _ := filepath.Glob(filepath.Join(dir, "rrd", target, "*.rrd"))
	return len(m)
}
