package packaging

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The paths the package owns or creates on the machine.
const (
	spoolDir = "/var/spool/spoold"
	stateDir = "/var/lib/spoold"
	rrdDir   = "/var/lib/spoold/rrd"
	etcDir   = "/etc/spoold"
	wants    = "/etc/systemd/system/multi-user.target.wants/spoold.service"
)

// machineLock is the file the tests that install the package lock, for
// the whole machine (not beneath a test's TMPDIR).
const machineLock = "/run/lock/spoold-packaging-test.lock"

// requireFreeMachine stops the test unless it runs as root on a machine
// without a spoold package or its directories: it installs and purges the
// package for real. It first waits for any other such test on the machine
// to end (two checkouts' make check at once), which would otherwise install
// and purge the one spoold package, user and directories under this one.
func requireFreeMachine(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		unavailable(t, "installing a .deb needs root (CI runs as root)")
	}
	lockMachine(t)
	requireTools(t, "dpkg-dev", "dpkg-deb", "dpkg-shlibdeps", "dpkg-architecture")
	requireTools(t, "adduser, init-system-helpers", "dpkg", "adduser", "deb-systemd-helper")
	if out, _ := exec.Command("dpkg-query", "-W", "-f=${Status}", "spoold").Output(); strings.Contains(string(out), "installed") {
		unavailable(t, "a spoold package is installed here (%s); the test would purge it", out)
	}
	for _, p := range []string{spoolDir, stateDir, etcDir} {
		if _, err := os.Lstat(p); err == nil {
			unavailable(t, "%s exists here; the test would install over it", p)
		}
	}
}

// TestDebInstallsUserDirsUnitAndPurges builds the package with `make deb`,
// installs it with dpkg -i, and checks what an operator relies on: the
// spoold system user; the spool and RRD directories 0750 and its own; the
// configuration as conffiles; the unit enabled but not started; the
// ExecStartPre check of the unit passing as spoold with the shipped
// configuration. Then dpkg -P removes it all, except a spool that still
// holds entries.
func TestDebInstallsUserDirsUnitAndPurges(t *testing.T) {
	requireFreeMachine(t)
	_, err := user.Lookup("spoold")
	userExisted := err == nil
	t.Cleanup(func() {
		exec.Command("dpkg", "-P", "spoold").Run()
		os.RemoveAll(spoolDir) // the test's own entry, kept by the purge
		if !userExisted {
			exec.Command("userdel", "spoold").Run()
			exec.Command("groupdel", "spoold").Run()
		}
	})
	tmp := t.TempDir()
	out := run(t, command("make", "-s", "-C", root, "deb", "BIN="+filepath.Join(tmp, "spoold"), "DEBDIR="+tmp))
	lines := strings.Split(strings.TrimSpace(out), "\n")
	deb := lines[len(lines)-1]
	if !strings.HasSuffix(deb, ".deb") {
		t.Fatalf("make deb printed no .deb path:\n%s", out)
	}
	run(t, command("dpkg", "-i", deb))

	u := checkUser(t)
	for _, d := range []string{spoolDir, stateDir, rrdDir} {
		fi := checkMode(t, d, true, 0o750)
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && (strconv.Itoa(int(st.Uid)) != u.Uid || strconv.Itoa(int(st.Gid)) != u.Gid) {
			t.Errorf("%s: owned by %d:%d, want spoold (%s:%s)", d, st.Uid, st.Gid, u.Uid, u.Gid)
		}
	}
	conffiles := run(t, command("dpkg-query", "-W", "-f=${Conffiles}", "spoold"))
	for _, f := range []string{etcDir + "/targets.conf", etcDir + "/profiles.conf"} {
		if !strings.Contains(conffiles, " "+f+" ") {
			t.Errorf("%s is not a conffile; conffiles:\n%s", f, conffiles)
		}
	}
	if _, err := os.Stat(wants); err != nil {
		t.Errorf("the unit is not enabled: %v", err)
	}
	if _, err := os.Stat("/run/systemd/system"); err == nil {
		if state, _ := exec.Command("systemctl", "is-active", "spoold").Output(); strings.TrimSpace(string(state)) == "active" {
			t.Errorf("the package started spoold; it must only enable it")
		}
	}
	checkStartPre(t, u)

	// A spool that holds entries survives the purge; empty directories go.
	if err := os.WriteFile(filepath.Join(spoolDir, "entry"), []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	run(t, command("dpkg", "-P", "spoold"))
	if out, _ := exec.Command("dpkg-query", "-W", "-f=${Status}", "spoold").Output(); strings.Contains(string(out), "installed") {
		t.Errorf("after dpkg -P: %s", out)
	}
	for _, p := range []string{"/usr/bin/spoold", "/usr/lib/systemd/system/spoold.service", "/usr/share/man/man8/spoold.8.gz", etcDir, wants, stateDir} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s is left after dpkg -P", p)
		}
	}
	if _, err := os.Stat(filepath.Join(spoolDir, "entry")); err != nil {
		t.Errorf("dpkg -P deleted a spool with entries in it: %v", err)
	}
}

// checkUser checks the spoold user: a system account, home /var/lib/spoold,
// no login shell.
func checkUser(t *testing.T) *user.User {
	t.Helper()
	u, err := user.Lookup("spoold")
	if err != nil {
		t.Fatalf("the package created no spoold user: %v", err)
	}
	f := strings.Split(strings.TrimSpace(run(t, command("getent", "passwd", "spoold"))), ":")
	if uid, _ := strconv.Atoi(u.Uid); uid >= 1000 || u.HomeDir != stateDir || len(f) < 7 || !strings.HasSuffix(f[6], "nologin") {
		t.Errorf("spoold user %v, want a system uid, home %s, shell nologin", f, stateDir)
	}
	return u
}

// checkStartPre runs the unit's ExecStartPre (spoold -t on the shipped
// configuration) as the unit's user, as systemd would.
func checkStartPre(t *testing.T, u *user.User) {
	t.Helper()
	unit, err := os.ReadFile("/usr/lib/systemd/system/spoold.service")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, l := range strings.Split(string(unit), "\n") {
		if a, ok := strings.CutPrefix(l, "ExecStartPre="); ok {
			args = strings.Fields(a)
		}
	}
	if len(args) == 0 || args[0] != "/usr/bin/spoold" {
		t.Fatalf("the installed unit's ExecStartPre is %q, want /usr/bin/spoold -t ...", args)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	cmd := command(args[0], args[1:]...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	if out := run(t, cmd); !strings.Contains(out, "configuration ok") {
		t.Errorf("%s as spoold:\n%s", strings.Join(args, " "), out)
	}
}

// lockMachine holds an exclusive lock on machineLock until the test and
// every cleanup registered after this call have ended (closing the file
// releases it).
func lockMachine(t *testing.T) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(machineLock), 0o755); err != nil {
		t.Fatalf("make the machine lock's directory: %v", err)
	}
	f, err := os.OpenFile(machineLock, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatalf("open the machine lock: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatalf("lock %s: %v", machineLock, err)
	}
}
