package main

import (
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/simtest"
	"github.com/spoold/spoold/simulate"
)

// TestSlowFirstDiscoveryCompletes: a device whose discovery takes longer
// than a poll cycle (150 interfaces, each answer 60 ms late, one row per
// GetBulk: 151 requests, about 9 s, against a 6 s interval) while its poll
// takes three Gets. The first discovery was cut at each cycle's deadline
// and started again from scratch: no RRD file ever, and with one poll in
// flight the other devices were never polled. Now the discovery goes on
// beside the cycles until it completes, the device's files appear, and
// every cycle polls every device.
func TestSlowFirstDiscoveryCompletes(t *testing.T) {
	const interfaces = 150
	o := simulate.DefaultOptions()
	o.Devices, o.Interfaces = 3, interfaces
	sim := simtest.Serve(t, o)
	sim.Fleet().SetBehavior(0, simulate.Behavior{Delay: 60 * time.Millisecond})
	f := &e2eFleet{sim: sim, targets: writeTargets(t, sim, "if-mib")}
	dir := t.TempDir()
	p := startDaemon(t, daemonArgs(dir, f, "--poll-interval", "6s", "--poll-concurrency", "1",
		"--poll-max-repetitions", "1", "--poll-max-varbinds", "1000", "--write-delay", "1s", "--write-jitter", "0s")...)
	files := func() int { return rowFiles(dir, sim.Fleet().Name(0)) }
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
