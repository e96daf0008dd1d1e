package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/rrdctest"
)

// LibreNMS's RRD store with $config['rrdcached'] set (LibreNMS/Data/Store/
// Rrd.php): one `rrdtool -` process in its rrd_dir, fed lines of the form
// "COMMAND FILE --daemon ADDRESS OPTIONS…" with names relative to the
// server's directory. The test sends the commands LibreNMS sends for a new
// port (its existence check by LAST, CREATE -O, an update with N, the file
// list of a host) to Debian's rrdcached and to spoold, and checks each
// answer as LibreNMS reads it.

// librenmsSession runs lines through `rrdtool -` in dir and returns each
// command's output, its "OK …" or "ERROR: …" line last.
func librenmsSession(t *testing.T, dir string, lines []string) [][]string {
	t.Helper()
	cmd := exec.Command("rrdtool", "-")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(strings.Join(lines, "\n") + "\nquit\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rrdtool - in %s: %v\n%s", dir, err, out)
	}
	var res [][]string
	var cur []string
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		cur = append(cur, l)
		if strings.HasPrefix(l, "OK ") || strings.HasPrefix(l, "ERROR: ") {
			res = append(res, cur)
			cur = nil
		}
	}
	if len(res) != len(lines) {
		t.Fatalf("rrdtool - answered %d of %d commands:\n%s", len(res), len(lines), out)
	}
	return res
}

// runLibreNMS sends LibreNMS's commands for host/port-id1.rrd to the server
// at addr whose directory is dir, and checks what LibreNMS relies on.
func runLibreNMS(t *testing.T, addr, dir string) {
	requireRRDTool(t)
	if err := os.MkdirAll(filepath.Join(dir, "host"), 0o755); err != nil {
		t.Fatal(err)
	}
	const file = "host/port-id1.rrd"
	daemon := " --daemon " + addr
	now := time.Now().Unix()
	out := librenmsSession(t, dir, []string{
		"last " + file + daemon,
		"create " + file + daemon + " --step 300 DS:INOCTETS:DERIVE:600:0:U DS:OUTOCTETS:DERIVE:600:0:U RRA:AVERAGE:0.5:1:2016 RRA:LAST:0.5:1:2016 -O",
		"last " + file + daemon,
		"update " + file + daemon + " N:1000:2000",
		"list /host" + daemon,
		"create " + file + daemon + " --step 300 DS:INOCTETS:DERIVE:600:0:U DS:OUTOCTETS:DERIVE:600:0:U RRA:AVERAGE:0.5:1:2016 RRA:LAST:0.5:1:2016 -O",
	})
	// checkRrdExists: a missing file is an answer naming it with "No such
	// file or directory".
	if s := strings.Join(out[0], "\n"); !strings.Contains(s, file) || !strings.Contains(s, "No such file or directory") {
		t.Errorf("last of a missing file answers %q; LibreNMS takes it for an existing file", s)
	}
	for i, what := range []string{"create", "last", "update", "list"} {
		if last := out[i+1][len(out[i+1])-1]; !strings.HasPrefix(last, "OK ") {
			t.Errorf("%s: %q", what, out[i+1])
		}
	}
	if len(out[2]) != 2 {
		t.Errorf("last of the new file answers %q, want its last update and OK", out[2])
	}
	if strings.Join(out[4][:len(out[4])-1], " ") != "port-id1.rrd" {
		t.Errorf("list /host answers %q, want port-id1.rrd (LibreNMS finds a host's files so)", out[4])
	}
	// A second create -O of an existing file (LibreNMS creates when its
	// check says missing; -O never replaces a file) leaves the update.
	if last := out[5][len(out[5])-1]; !strings.HasPrefix(last, "ERROR: ") || !strings.Contains(strings.Join(out[5], " "), "exists") {
		t.Errorf("a second create -O answers %q, want the file's existence as the error", out[5])
	}
	rrdtoolOut(t, "flushcached", "--daemon", addr, filepath.Join(dir, file))
	got := rrdtoolOut(t, "lastupdate", filepath.Join(dir, file))
	lines := strings.Split(got, "\n")
	f := strings.Fields(lines[len(lines)-1])
	if len(f) != 3 || f[1] != "1000" || f[2] != "2000" {
		t.Fatalf("rrdtool lastupdate %s (no daemon): %q, want the update's 1000 2000", file, got)
	}
	if ts, err := strconv.ParseInt(strings.TrimSuffix(f[0], ":"), 10, 64); err != nil || ts < now || ts > time.Now().Unix() {
		t.Errorf("the update's time %s is not the client's N (between %d and now)", f[0], now)
	}
}

// TestLibreNMSThroughRRDCached: the reference run, against Debian's
// rrdcached (-B -R, as LibreNMS's setup runs it).
func TestLibreNMSThroughRRDCached(t *testing.T) {
	s := rrdctest.StartServer(t, "")
	runLibreNMS(t, s.Address(), s.Dir)
}

// TestLibreNMSThroughSpoold: the same commands to spoold's socket, in its
// --rrd-dir.
func TestLibreNMSThroughSpoold(t *testing.T) {
	r := newProtoRig(t)
	r.start(t, "--write-delay", "1h")
	runLibreNMS(t, "unix:"+r.sock, r.rrd(""))
}
