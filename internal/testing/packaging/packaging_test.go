package packaging

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// root is the repository, where the Makefile is.
const root = "../../.."

// unavailable ends the test for something missing here: a failure under
// SPOOLD_TEST_STRICT=1 (CI), a loud skip elsewhere (testenv.Missing).
func unavailable(t *testing.T, format string, a ...any) {
	t.Helper()
	testenv.Missing(t, format, a...)
}

func requireTools(t *testing.T, pkg string, commands ...string) {
	t.Helper()
	for _, c := range commands {
		if _, err := exec.LookPath(c); err != nil {
			unavailable(t, "%v: install %s (scripts/install-deps.sh)", err, pkg)
		}
	}
}

// run runs a command and returns its stdout, failing the test with its
// output when it fails.
func run(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s%s", strings.Join(cmd.Args, " "), err, out.String(), errOut.String())
	}
	return out.String()
}

func command(name string, args ...string) *exec.Cmd { return exec.Command(name, args...) }

// checkMode fails unless path is a file or directory with mode perm.
func checkMode(t *testing.T, path string, dir bool, perm os.FileMode) os.FileInfo {
	t.Helper()
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		t.Errorf("installed tree: %v", err)
	case fi.IsDir() != dir || !dir && !fi.Mode().IsRegular():
		t.Errorf("%s: %s, want a regular file or directory as listed", path, fi.Mode().Type())
	case fi.Mode().Perm() != perm:
		t.Errorf("%s: mode %04o, want %04o", path, fi.Mode().Perm(), perm)
	}
	return fi
}

// helpFlags are the flags `spoold --help` of bin lists.
func helpFlags(t *testing.T, bin string) []string {
	t.Helper()
	flags := regexp.MustCompile(`(?m)^ +(?:-\w, )?(--[a-z0-9-]+)`).FindAllStringSubmatch(run(t, command(bin, "--help")), -1)
	var names []string
	for _, m := range flags {
		names = append(names, m[1])
	}
	if len(names) < 30 {
		t.Fatalf("%s --help lists %d flags", bin, len(names))
	}
	return names
}

// TestMakeInstallTree runs `make install DESTDIR=...` as a packager does
// and checks the tree: the binary, spoold(8), the units pointing at the
// installed binary, the link by rrdcached's name, the docs and examples, and an /etc/spoold that passes
// `spoold -t`; man renders the page with every flag of --help; a second
// install keeps an operator's edited targets file.
func TestMakeInstallTree(t *testing.T) {
	requireTools(t, "make, sed (build-essential)", "make", "sed", "install")
	requireTools(t, "man-db", "man")
	tmp := t.TempDir()
	dest := filepath.Join(tmp, "dest")
	install := func() {
		run(t, command("make", "-s", "-C", root, "install", "DESTDIR="+dest, "BIN="+filepath.Join(tmp, "build", "spoold")))
	}
	install()

	for _, f := range []struct {
		path string
		dir  bool
		perm os.FileMode
	}{
		{"usr/local/bin/spoold", false, 0o755},
		{"usr/local/share/man/man8/spoold.8", false, 0o644},
		{"usr/local/lib/systemd/system/spoold.service", false, 0o644},
		{"usr/local/lib/systemd/system/spoold-rrdcached.service", false, 0o644},
		{"usr/local/share/doc/spoold/operations.md", false, 0o644},
		{"usr/local/share/doc/spoold/examples/targets.conf", false, 0o644},
		{"usr/local/share/doc/spoold/examples/profiles.conf", false, 0o644},
		{"etc/spoold", true, 0o755},
		{"etc/spoold/targets.conf", false, 0o644},
		{"etc/spoold/profiles.conf", false, 0o644},
	} {
		checkMode(t, filepath.Join(dest, f.path), f.dir, f.perm)
	}
	bin := filepath.Join(dest, "usr/local/bin/spoold")

	unit, err := os.ReadFile(filepath.Join(dest, "usr/local/lib/systemd/system/spoold.service"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nType=notify\n", "\nWatchdogSec=", "\nExecStart=/usr/local/bin/spoold ",
		"\nExecStartPre=/usr/local/bin/spoold -t ", "file:///usr/local/share/doc/spoold/operations.md"} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("installed unit lacks %q", want)
		}
	}

	unit, err = os.ReadFile(filepath.Join(dest, "usr/local/lib/systemd/system/spoold-rrdcached.service"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nType=notify\n", "\nEnvironmentFile=-/etc/default/rrdcached\n", "exec /usr/local/bin/spoold rrdcached -g "} {
		if !strings.Contains(string(unit), want) {
			t.Errorf("installed spoold-rrdcached unit lacks %q", want)
		}
	}
	// Debian's init script runs DAEMON=<this link>: spoold by rrdcached's name.
	link := filepath.Join(dest, "usr/local/lib/spoold/rrdcached")
	if to, err := os.Readlink(link); err != nil || to != "../../bin/spoold" {
		t.Errorf("%s: links to %q (%v), want ../../bin/spoold", link, to, err)
	}

	man := command("man", "-l", filepath.Join(dest, "usr/local/share/man/man8/spoold.8"))
	man.Env = append(os.Environ(), "MANWIDTH=200", "MANPAGER=cat", "PAGER=cat", "LC_ALL=C.UTF-8")
	page := strings.NewReplacer("\u2010", "-", "\u2212", "-").Replace(run(t, man))
	if !strings.Contains(page, "SPOOLD(8)") || !strings.Contains(page, "OPTIONS") {
		t.Fatalf("man -l spoold.8 rendered no spoold(8) page:\n%s", page)
	}
	for _, f := range helpFlags(t, bin) {
		if !strings.Contains(page, f+" ") && !strings.Contains(page, f+"\n") {
			t.Errorf("man -l spoold.8 does not show %s of --help", f)
		}
	}

	etc := filepath.Join(dest, "etc/spoold")
	out := run(t, command(bin, "-t", "--targets", filepath.Join(etc, "targets.conf"), "--profiles", filepath.Join(etc, "profiles.conf"),
		"--spool-dir", filepath.Join(tmp, "spool"), "--rrd-dir", filepath.Join(tmp, "rrd")))
	if !strings.Contains(out, "configuration ok") {
		t.Errorf("spoold -t with the installed /etc/spoold:\n%s", out)
	}

	mine := []byte("# mine\n")
	if err := os.WriteFile(filepath.Join(etc, "targets.conf"), mine, 0o644); err != nil {
		t.Fatal(err)
	}
	install()
	if got, _ := os.ReadFile(filepath.Join(etc, "targets.conf")); !bytes.Equal(got, mine) {
		t.Errorf("a second make install replaced the operator's targets.conf with:\n%s", got)
	}
}
