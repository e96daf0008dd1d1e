package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spoold/spoold/internal/rrdctest"
)

// forwardState is /status's writer.forward: up, and the pending, sent and
// confirmed counts.
func forwardState(st map[string]any) (up bool, lastErr string, pending, confirmed float64) {
	w, _ := st["writer"].(map[string]any)
	f, _ := w["forward"].(map[string]any)
	up, _ = f["up"].(bool)
	lastErr, _ = f["last_error"].(string)
	return up, lastErr, num(st, "writer", "forward", "pending"), num(st, "writer", "forward", "confirmed")
}

// TestForwardThroughAKilledCentralLosesNothing: a polling instance
// forwards to a central rrdcached (Debian's, with a journal) that is
// SIGKILLed mid-stream and started again. While it is down the entries
// stay in the poller's spool and /status says the peer is down, naming it;
// when it is back the backlog drains. After the poller's shutdown flush
// and the central's, every entry the poller spooled is in its RRD file on
// the central (rrdtool fetch), none twice, none quarantined.
func TestForwardThroughAKilledCentralLosesNothing(t *testing.T) {
	requireRRDTool(t)
	const devices = 4
	r := newLedgerRig(t, t.TempDir(), rigOptions{devices: devices, precreate: true})
	central := rrdctest.StartServer(t, filepath.Join(r.dir, "rrd"), "-w", "3600", "-f", "7200")
	p := startDaemon(t, r.args("--rrd-dir", filepath.Join(r.dir, "local-rrd"), "--forward", central.Address(),
		"--write-delay", "1s", "--write-jitter", "0s", "--write-backoff-min", "1s", "--write-backoff-max", "2s")...)
	p.waitFor(t, "rows confirmed by the central", func(st map[string]any) bool {
		up, _, _, confirmed := forwardState(st)
		return up && confirmed >= 3*devices
	})

	central.Kill()
	st := p.waitFor(t, "the central seen down", func(st map[string]any) bool {
		up, lastErr, pending, _ := forwardState(st)
		return !up && lastErr != "" && pending > 0
	})
	if _, lastErr, _, _ := forwardState(st); !strings.Contains(lastErr, central.Address()) {
		t.Fatalf("the forward error %q does not name the peer %s", lastErr, central.Address())
	}
	_, _, downPending, downConfirmed := forwardState(st)
	p.waitFor(t, "polls piling up in the spool", func(st map[string]any) bool {
		up, _, pending, confirmed := forwardState(st)
		if confirmed != downConfirmed {
			t.Fatalf("the poller counts %v rows confirmed with the central down (had %v)", confirmed, downConfirmed)
		}
		return !up && pending >= downPending+2*devices
	})

	central.Restart()
	p.waitFor(t, "the backlog drained", func(st map[string]any) bool {
		up, _, pending, confirmed := forwardState(st)
		return up && confirmed > downConfirmed && pending <= devices
	})
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.stderr)
	}
	central.Stop() // -F: writes whatever it still queues
	r.ledger.stop()
	if left := spoolEntries(t, r.dir); len(left) != 0 {
		t.Fatalf("%d entries left in the poller's spool", len(left))
	}
	v := r.verify(t)
	if v.lost != 0 || v.doubled != 0 || v.quarantined != 0 || v.checked < 5*devices {
		t.Fatalf("lost=%d doubled=%d quarantined=%d checked=%d of %d published", v.lost, v.doubled, v.quarantined, v.checked, v.published)
	}
	t.Logf("%d entries checked on the central, %d published", v.checked, v.published)
}
