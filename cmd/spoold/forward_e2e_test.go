package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/spoold/spoold/internal/testing/rrdctest"
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
	r := newLedgerRig(t, t.TempDir(), rigOptions{devices: forwardDevices, precreate: true})
	central := rrdctest.StartServer(t, filepath.Join(r.dir, "rrd"), "-w", "3600", "-f", "7200")
	p := startForwarder(t, r, central.Address())
	forwardOutage(t, p, central.Address(), central.Kill, central.Restart)
	drainAndVerify(t, r, p, central.Stop) // -F: writes whatever it still queues
}

// forwardDevices is the fleet of the forwarding e2e tests.
const forwardDevices = 4

// startForwarder starts a poller of the rig that forwards to peer.
func startForwarder(t *testing.T, r *ledgerRig, peer string) *daemonProc {
	t.Helper()
	return startDaemon(t, r.args("--rrd-dir", filepath.Join(r.dir, "local-rrd"), "--forward", peer,
		"--write-delay", "1s", "--write-jitter", "0s", "--write-backoff-min", "1s", "--write-backoff-max", "2s")...)
}

// forwardOutage waits for p to forward, kills its peer, checks that the
// polls pile up in p's spool while /status says the peer is down (naming
// it), restarts the peer and waits until the backlog drained.
func forwardOutage(t *testing.T, p *daemonProc, peer string, kill, restart func()) {
	t.Helper()
	p.waitFor(t, "rows confirmed by the central", func(st map[string]any) bool {
		up, _, _, confirmed := forwardState(st)
		return up && confirmed >= 3*forwardDevices
	})
	kill()
	st := p.waitFor(t, "the central seen down", func(st map[string]any) bool {
		up, lastErr, pending, _ := forwardState(st)
		return !up && lastErr != "" && pending > 0
	})
	if _, lastErr, _, _ := forwardState(st); !strings.Contains(lastErr, peer) {
		t.Fatalf("the forward error %q does not name the peer %s", lastErr, peer)
	}
	_, _, downPending, downConfirmed := forwardState(st)
	p.waitFor(t, "polls piling up in the spool", func(st map[string]any) bool {
		up, _, pending, confirmed := forwardState(st)
		if confirmed != downConfirmed {
			t.Fatalf("the poller counts %v rows confirmed with the central down (had %v)", confirmed, downConfirmed)
		}
		return !up && pending >= downPending+2*forwardDevices
	})
	restart()
	p.waitFor(t, "the backlog drained", func(st map[string]any) bool {
		up, _, pending, confirmed := forwardState(st)
		return up && confirmed > downConfirmed && pending <= forwardDevices
	})
}

// drainAndVerify stops the poller p (SIGTERM: its shutdown flush forwards
// the rest), then the central (stopCentral), and checks with the ledger
// that every entry p spooled is in its file on the central, once.
func drainAndVerify(t *testing.T, r *ledgerRig, p *daemonProc, stopCentral func()) {
	t.Helper()
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.stderr)
	}
	stopCentral()
	r.ledger.stop()
	if left := spoolEntries(t, r.dir); len(left) != 0 {
		t.Fatalf("%d entries left in the poller's spool", len(left))
	}
	// The waits of forwardOutage saw at least 5 polls of each device.
	v := r.verify(t)
	if v.lost != 0 || v.doubled != 0 || v.quarantined != 0 || v.checked < 5*forwardDevices {
		t.Fatalf("lost=%d doubled=%d quarantined=%d checked=%d of %d published", v.lost, v.doubled, v.quarantined, v.checked, v.published)
	}
	t.Logf("%d entries checked on the central, %d published", v.checked, v.published)
}
