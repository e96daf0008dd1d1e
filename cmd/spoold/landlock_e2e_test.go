package main

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/spoold/spoold/admin"
	"github.com/spoold/spoold/internal/confine"
	"github.com/spoold/spoold/internal/testing/testenv"
)

// probeEnv names, in the daemon child, a file outside its directories and
// one inside --rrd-dir, separated by a colon: on each SIGUSR2 the child
// writes both with os.WriteFile, as a code path that forgot the daemon's
// checks would, and logs what the kernel answered ("landlock-probe
// outside=... inside=..."). Test code only: the daemon's own code has no
// such path.
const probeEnv = "SPOOLD_TEST_LANDLOCK_PROBE"

func init() {
	outside, inside, ok := strings.Cut(os.Getenv(probeEnv), ":")
	if os.Getenv(childEnv) != "1" || !ok {
		return
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR2)
	go func() {
		for range sig {
			res := func(path string) string {
				if err := os.WriteFile(path, []byte("probe\n"), 0o600); err != nil {
					return strings.ReplaceAll(err.Error(), " ", "_")
				}
				return "ok"
			}
			fmt.Fprintf(os.Stderr, "landlock-probe outside=%s inside=%s\n", res(outside), res(inside))
		}
	}()
}

// TestLandlockConfinesTheDaemon: with --landlock (the default) the daemon
// polls, writes its RRD files, draws a graph with librrd, re-reads a
// targets file an editor replaced on SIGHUP, and removes its pid file and
// unix socket at exit, all confined; a write outside its directories from
// inside the daemon process is refused by the kernel (EACCES) while the
// same write inside --rrd-dir succeeds. With --landlock=false the same
// write outside succeeds: it is the confinement that refuses it. The start
// log line, /status and spoold doctor say which.
func TestLandlockConfinesTheDaemon(t *testing.T) {
	if st := confine.Probe(true); st.Mode != confine.Enforced {
		testenv.Missing(t, "this kernel cannot confine the daemon: %s", st)
	}
	requireRRDTool(t)
	f := startFleet(t, 2)
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("landlock=%v", on), func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			pid, sock := filepath.Join(dir, "run", "spoold.pid"), filepath.Join(dir, "run", "spoold.sock")
			if err := os.Mkdir(filepath.Dir(pid), 0o750); err != nil {
				t.Fatal(err)
			}
			t.Setenv(probeEnv, filepath.Join(outside, "written")+":"+filepath.Join(dir, "rrd", "probe"))
			p := startWrittenDaemon(t, dir, f, 2, "--write-delay", "1s", "--write-jitter", "0s",
				"--pid-file", pid, "--listen", "unix:"+sock, fmt.Sprintf("--landlock=%v", on))

			mode := map[bool]string{true: "enforced", false: "off"}[on]
			if st := p.status(t); st["landlock"].(map[string]any)["mode"] != mode {
				t.Errorf("/status landlock %v, want mode %s", st["landlock"], mode)
			}
			if !regexp.MustCompile(`msg="spoold started".* landlock="` + mode + ` \(Landlock ABI \d+`).MatchString(p.stderr.String()) {
				t.Errorf("the start line does not say landlock is %s:\n%s", mode, p.stderr)
			}
			img := get(t, p.admin+admin.GraphKeyURL(f.sim.Fleet().Name(0), "", nil))
			if _, err := png.DecodeConfig(bytes.NewReader(img)); err != nil {
				t.Errorf("graph: %v", err)
			}
			replaceByRename(t, f.targets)
			p.cmd.Process.Signal(syscall.SIGHUP)
			p.waitFor(t, "the reload", func(map[string]any) bool { return strings.Contains(p.stderr.String(), "reloaded targets") })
			if strings.Contains(p.stderr.String(), "reload: keeping") {
				t.Errorf("the reload of a targets file replaced by rename failed:\n%s", p.stderr)
			}

			p.cmd.Process.Signal(syscall.SIGUSR2)
			p.waitFor(t, "the probe's line", func(map[string]any) bool { return strings.Contains(p.stderr.String(), "landlock-probe") })
			want := "landlock-probe outside=ok inside=ok"
			if on {
				want = "landlock-probe outside=open_" + filepath.Join(outside, "written") + ":_permission_denied inside=ok"
			}
			if !strings.Contains(p.stderr.String(), want) {
				t.Errorf("writes from inside the daemon: want %q in\n%s", want, p.stderr)
			}
			if _, err := os.Stat(filepath.Join(outside, "written")); on != os.IsNotExist(err) {
				t.Errorf("the file outside after the probe: %v (confined %v)", err, on)
			}

			if err := p.stop(t, syscall.SIGTERM); err != nil {
				t.Fatalf("exit after SIGTERM: %v\n%s", err, p.stderr)
			}
			for _, path := range []string{pid, sock} {
				if _, err := os.Lstat(path); !os.IsNotExist(err) {
					t.Errorf("%s after the exit: %v, want it removed", path, err)
				}
			}
			if left := spoolEntries(t, dir); len(left) != 0 {
				t.Errorf("%d entries left after the shutdown flush", len(left))
			}
		})
	}
	var out, errb bytes.Buffer
	runDoctor([]string{"--spool-dir", t.TempDir(), "--rrd-dir", t.TempDir()}, &out, &errb)
	if !regexp.MustCompile(`(?m)^ok\s+landlock\s+the daemon's file access: enforced \(Landlock ABI \d+`).MatchString(out.String()) {
		t.Errorf("spoold doctor does not report landlock enforced:\n%s\n%s", out.String(), errb.String())
	}
}

// replaceByRename rewrites the file at path as an editor saves it: a new
// file renamed over the old one.
func replaceByRename(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".new", b, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}
