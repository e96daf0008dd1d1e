package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/spoold/spoold/simulate"
)

// TestSlowFirstDiscoveryCompletes: a device whose discovery takes longer
// than a poll cycle (200 interfaces, each answer 40 ms late, one row per
// GetBulk: 201 requests, about 8 s, against a 4 s interval) while its poll
// takes three Gets. The first discovery was cut at each cycle's deadline
// and started again from scratch: no RRD file ever, and with one poll in
// flight the other devices were never polled. Now the discovery goes on
// beside the cycles until it completes, the device's files appear, and
// every cycle polls every device.
func TestSlowFirstDiscoveryCompletes(t *testing.T) {
	const interfaces = 200
	o := simulate.DefaultOptions()
	o.Devices, o.Interfaces = 3, interfaces
	sim := serveSimulator(t, o)
	sim.Fleet().SetBehavior(0, simulate.Behavior{Delay: 40 * time.Millisecond})
	f := &e2eFleet{sim: sim, targets: writeTargets(t, sim, "if-mib")}
	dir := t.TempDir()
	p := startDaemon(t, daemonArgs(dir, f, "--poll-interval", "4s", "--poll-concurrency", "1",
		"--poll-max-repetitions", "1", "--poll-max-varbinds", "1000", "--write-delay", "1s", "--write-jitter", "0s")...)
	files := func() int {
		m, _ := filepath.Glob(filepath.Join(dir, "rrd", sim.Fleet().Name(0), "*.rrd"))
		return len(m)
	}
	p.waitFor(t, "the slow device's RRD files", func(map[string]any) bool { return files() == interfaces })
	cycles := regexp.MustCompile(`msg="poll cycle" component=poller seq=(\d+) devices=3 ok=(\d+) failed=\d+ skipped=\d+ overrun=(\d+)`).FindAllStringSubmatch(p.stderr.String(), -1)
	if len(cycles) < 2 {
		t.Fatalf("%d poll cycles logged before the files appeared, want at least 2 (the discovery outlasts a cycle):\n%s", len(cycles), p.stderr)
	}
	for _, c := range cycles {
		if ok, _ := strconv.Atoi(c[2]); ok != 3 || c[3] != "0" {
			t.Errorf("cycle %s: %s of 3 devices polled, %s overrun", c[1], c[2], c[3])
		}
	}
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}
