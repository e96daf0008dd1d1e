package rrdcached_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/rrdctest"
	"github.com/spoold/spoold/rrdcached"
)

// TestConformance sends rrdctest's script to Debian's rrdcached and to the
// server (with the in-memory backend) and compares the replies: every
// status and line byte for byte, the RRD directory's path, STATS values
// and LIST's order aside. The permission script goes to a second listener
// of each with rrdcached -P's list.
func TestConformance(t *testing.T) {
	base := t.TempDir()
	rdir := filepath.Join(base, "rrdcached")
	if err := os.Mkdir(rdir, 0o755); err != nil {
		t.Fatal(err)
	}
	rrdctest.Prepare(t, rdir)
	rsock, rlimited := filepath.Join(base, "rrdcached.sock"), filepath.Join(base, "rrdcached-limited.sock")
	rrdctest.Start(t, rdir, "-l", "unix:"+rsock, "-P", rrdctest.LimitedPermissions, "-l", "unix:"+rlimited)
	rdirReal, err := filepath.EvalSymlinks(rdir)
	if err != nil {
		t.Fatal(err)
	}

	perms, err := rrdcached.ParsePermissions(rrdctest.LimitedPermissions)
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, func(o *rrdcached.Options) {
		o.Listeners = append(o.Listeners, rrdcached.ListenerOptions{
			Spec: "unix:" + filepath.Join(filepath.Dir(o.Dir), "limited.sock"), Permissions: perms})
	})
	ours := func(i int) string { return s.Addrs()[i].String() }

	for _, run := range []struct {
		name           string
		script         []rrdctest.Session
		theirs, oursTo string
	}{
		{"script", rrdctest.Script(false), rsock, ours(0)},
		{"permissions", rrdctest.PermissionScript(), rlimited, ours(1)},
	} {
		want, err := rrdctest.Run("unix", run.theirs, run.script, 10*time.Second)
		if err != nil {
			t.Fatalf("%s against rrdcached: %v", run.name, err)
		}
		got, err := rrdctest.Run("unix", run.oursTo, run.script, 10*time.Second)
		if err != nil {
			t.Fatalf("%s against the server: %v", run.name, err)
		}
		if d := rrdctest.Diff("rrdcached", rrdctest.Normalize(want, rdirReal), "spoold", rrdctest.Normalize(got, s.dir)); d != "" {
			t.Errorf("%s: replies differ:\n%s", run.name, d)
		}
	}
}
