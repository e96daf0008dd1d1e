package main

import (
	"net/http"
	"strings"
	"testing"
)

// longPauseArgs start spoold on a backlog with a start-up walk that pauses
// the longest loader_sleep allowed after every entry, and a shutdown
// timeout shorter than that pause: only an interrupted pause lets the walk
// end and the shutdown flush write.
func longPauseDaemon(t *testing.T) (*ledgerRig, *daemonProc) {
	requireRRDTool(t)
	r := newLedgerRig(t, t.TempDir(), rigOptions{devices: crashDevices, pregen: crashPregen, precreate: true})
	p := startDaemon(t, r.args("--loader-files", "1", "--loader-sleep", "1m", "--shutdown-timeout", "20s",
		"--write-delay", "0s", "--write-jitter", "0")...)
	p.waitFor(t, "the walk's first pause", func(st map[string]any) bool { return num(st, "loader", "files") >= 1 })
	if st := p.status(t); loaderDone(st) {
		t.Fatalf("the throttled walk is already done: %v", st["loader"])
	}
	return r, p
}

// TestSIGTERMDuringALongLoaderPause: SIGTERM during a one-minute loader
// pause ends it, the walk finishes unthrottled, and the shutdown flush
// writes every entry (the pause used to outlast --shutdown-timeout, and the
// shutdown flushed nothing).
func TestSIGTERMDuringALongLoaderPause(t *testing.T) {
	r, p := longPauseDaemon(t)
	stopAndVerify(t, r, p)
}

// TestPOSTLoaderEndsALongPause: POST /loader loader_sleep=0 during a
// one-minute pause lets the walk finish at once.
func TestPOSTLoaderEndsALongPause(t *testing.T) {
	r, p := longPauseDaemon(t)
	resp, err := http.Post(p.admin+"/loader", "application/x-www-form-urlencoded", strings.NewReader("loader_sleep=0s"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST /loader loader_sleep=0s: %d", resp.StatusCode)
	}
	// waitFor gives up after 90 s; the pauses left would take hundreds of minutes.
	p.waitFor(t, "the walk to finish after loader_sleep=0", loaderDone)
	stopAndVerify(t, r, p)
}
