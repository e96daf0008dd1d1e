package rrdcached_test

import (
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// TestRRDToolClient: rrdtool's own client (librrd's rrdc_*) talks to the
// server: update, flushcached, last, first and fetch --daemon work, and an
// error reaches the user with the server's words.
func TestRRDToolClient(t *testing.T) {
	rrdtool := testenv.LookPath(t, "rrdtool", "rrdtool --daemon is the client every RRD tool uses")
	s := startServer(t, nil)
	seedFetch(s.backend)
	daemon := "unix:" + s.Addrs()[0].String()
	a := filepath.Join(s.dir, "a.rrd")
	run := func(args ...string) (string, error) {
		out, err := exec.Command(rrdtool, args...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := run("update", "--daemon", daemon, a, at(10)+":1:2", at(20)+":3:4"); err != nil {
		t.Fatalf("rrdtool update --daemon: %v: %s", err, out)
	}
	if p := s.dial(t, 0).do("PENDING a.rrd"); !reflect.DeepEqual(p.Lines, []string{at(10) + ":1:2", at(20) + ":3:4"}) {
		t.Errorf("pending after rrdtool update: %q", p)
	}
	if out, err := run("last", "--daemon", daemon, a); err != nil || out != at(20) {
		t.Errorf("rrdtool last --daemon: %q, %v; want %s", out, err, at(20))
	}
	if out, err := run("flushcached", "--daemon", daemon, a); err != nil {
		t.Errorf("rrdtool flushcached --daemon: %v: %s", err, out)
	}
	if p := s.dial(t, 0).do("PENDING a.rrd"); len(p.Lines) != 0 {
		t.Errorf("pending after flushcached: %q", p)
	}
	if out, err := run("first", "--daemon", daemon, a); err != nil || out != "1699999930" {
		t.Errorf("rrdtool first --daemon: %q, %v; want 1699999930", out, err)
	}
	out, err := run("fetch", "--daemon", daemon, a, "AVERAGE", "-s", at(0), "-e", at(30))
	if err != nil || !strings.Contains(out, "1700000010: 1.0000000000e+00 -nan") || !strings.Contains(out, "x") {
		t.Errorf("rrdtool fetch --daemon: %v:\n%s", err, out)
	}
	out, err = run("update", "--daemon", daemon, filepath.Join(s.dir, "nope.rrd"), at(30)+":1:2")
	if err == nil || !strings.Contains(out, "No such file: "+s.dir+"/nope.rrd") {
		t.Errorf("rrdtool update --daemon of a missing file: %v: %s", err, out)
	}
	out, err = run("update", "--daemon", daemon, a, at(20)+":1:2")
	if err == nil || !strings.Contains(out, "illegal attempt to update using time") {
		t.Errorf("rrdtool update --daemon of an old time: %v: %s", err, out)
	}
}
