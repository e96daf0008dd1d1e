package main

import (
	"strings"
	"syscall"
	"testing"
)

// TestShutdownTimeoutLeavesTheRest: a shutdown flush cut by a
// --shutdown-timeout too short for the backlog ends the daemon, logs
// that it is incomplete, and leaves what it did not write in the spool;
// the next start writes it, every entry once. (The writer's own test,
// TestFlushAllEndsWithItsContext, holds the flush that never ended.)
func TestShutdownTimeoutLeavesTheRest(t *testing.T) {
	requireRRDTool(t)
	r := newLedgerRig(t, t.TempDir(), rigOptions{devices: crashDevices, pregen: crashPregen, precreate: true})
	p := startDaemon(t, r.args("--write-delay", "1h", "--write-jitter", "0", "--shutdown-timeout", "1ms")...)
	p.waitFor(t, "the walk", loaderDone)
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), `msg="flush at shutdown incomplete; the rest stays in the spool"`) {
		t.Fatalf("no incomplete shutdown flush logged:\n%s", p.stderr)
	}
	if left := spoolEntries(t, r.dir); len(left) == 0 {
		t.Fatal("the spool is empty after a shutdown flush of 1ms")
	}
	p2 := startDaemon(t, r.args()...)
	p2.waitFor(t, "the walk", loaderDone)
	stopAndVerify(t, r, p2)
}
