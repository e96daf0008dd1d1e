package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// centralArgs are the flags of a central spoold: no targets of its own, the
// rig's RRD directory, the rrdcached protocol on a unix socket.
func centralArgs(t *testing.T, r *ledgerRig, dir string) (args []string, sock string) {
	t.Helper()
	empty := filepath.Join(dir, "targets.conf")
	if err := os.WriteFile(empty, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	sock = filepath.Join(dir, "sock")
	return []string{"--spool-dir", filepath.Join(dir, "spool"), "--rrd-dir", filepath.Join(r.dir, "rrd"),
		"--targets", empty, "--admin-listen", "127.0.0.1:0", "--listen", "unix:" + sock,
		"--shutdown-timeout", "1m", "--log-level", "info"}, sock
}

// TestForwardThroughAKilledCentralSpooldLosesNothing: a polling spoold
// forwards to a central spoold (its rrdcached protocol on a unix socket)
// that is SIGKILLed mid-stream and started again: while it is down the
// poller's entries stay spooled and its /status says so; when it is back
// the backlog drains. After both shut down, the ledger of the poller's
// spool finds every entry in its RRD file on the central, none twice.
func TestForwardThroughAKilledCentralSpooldLosesNothing(t *testing.T) {
	requireRRDTool(t)
	r := newLedgerRig(t, t.TempDir(), rigOptions{devices: forwardDevices, precreate: true})
	cdir, err := os.MkdirTemp("", "central") // short: a socket path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(cdir) })
	cargs, sock := centralArgs(t, r, cdir)
	central := startDaemon(t, cargs...)
	p := startForwarder(t, r, "unix:"+sock)
	forwardOutage(t, p, sock, func() {
		if err := central.stop(t, syscall.SIGKILL); err == nil {
			t.Fatal("the central exited cleanly on SIGKILL")
		}
	}, func() { central = startDaemon(t, cargs...) })
	drainAndVerify(t, r, p, func() {
		if err := central.stop(t, syscall.SIGTERM); err != nil {
			t.Fatalf("central exit after SIGTERM: %v\n%s", err, central.stderr)
		}
	})
}
