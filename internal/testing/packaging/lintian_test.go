package packaging

import (
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// debVersion is the version scheme of make deb: a tag, a tag and the
// commits after it, or 0.0~git before any tag; always Debian revision 1.
var debVersion = regexp.MustCompile(`^(\d+(\.\d+)*(\+git\d{8}\.[0-9a-f]+)?|0\.0~git\d{8}\.[0-9a-f]+)(\+dirty)?-1$`)

// TestDebPassesLintian builds the package with `make deb` and checks what
// Debian's tools and an operator's apt rely on: a version that sorts
// (dpkg --compare-versions puts it after an older snapshot and before a
// release), a maintainer with a real address, the copyright file and the
// Debian changelog, a binary built with the build tags of scripts/gotags
// (gosnmp's debug logging compiled out: make sets them itself, so make
// runs here without the GOFLAGS of the make that runs the test), and no
// lintian error.
func TestDebPassesLintian(t *testing.T) {
	requireTools(t, "dpkg-dev", "dpkg-deb", "dpkg-shlibdeps", "dpkg-architecture")
	requireTools(t, "lintian", "lintian")
	tmp := t.TempDir()
	mk := command("make", "-s", "-C", root, "deb", "BIN="+filepath.Join(tmp, "spoold"), "DEBDIR="+tmp)
	mk.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GOFLAGS=") })
	out := run(t, mk)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	deb := lines[len(lines)-1]
	if !strings.HasSuffix(deb, ".deb") {
		t.Fatalf("make deb printed no .deb path:\n%s", out)
	}
	field := func(name string) string {
		return strings.TrimSpace(run(t, command("dpkg-deb", "--field", deb, name)))
	}
	version := field("Version")
	if !debVersion.MatchString(version) {
		t.Errorf("Version %q: want 1.2.3-1, 1.2.3+git<date>.<hash>-1 or 0.0~git<date>.<hash>-1", version)
	}
	if strings.HasPrefix(version, "0.0~git") {
		for _, c := range [][3]string{{"0.0~git20200101.abc-1", "lt", version}, {version, "lt", "0.1-1"}} {
			if err := exec.Command("dpkg", "--compare-versions", c[0], c[1], c[2]).Run(); err != nil {
				t.Errorf("dpkg --compare-versions %s %s %s is false", c[0], c[1], c[2])
			}
		}
	}
	if m := field("Maintainer"); strings.Contains(m, "localhost") || !regexp.MustCompile(`^[^<>]+ <[^@<> ]+@[^@<> ]+\.[^@<> ]+>$`).MatchString(m) {
		t.Errorf("Maintainer %q: want a name and a mail address", m)
	}
	contents := run(t, command("dpkg-deb", "--contents", deb))
	for _, f := range []string{"./usr/share/doc/spoold/copyright", "./usr/share/doc/spoold/changelog.Debian.gz"} {
		if !strings.Contains(contents, f) {
			t.Errorf("the package has no %s", f)
		}
	}
	checkBuildTags(t, deb, filepath.Join(tmp, "unpacked"))
	lint, _ := exec.Command("lintian", "--tag-display-limit", "0", deb).CombinedOutput()
	for _, l := range strings.Split(string(lint), "\n") {
		if strings.HasPrefix(l, "E: ") {
			t.Errorf("lintian: %s", l)
		}
	}
	t.Logf("lintian %s:\n%s", filepath.Base(deb), lint)
}

// checkBuildTags fails unless the spoold binary of the package deb
// (unpacked into dir) was built with every build tag of scripts/gotags.
func checkBuildTags(t *testing.T, deb, dir string) {
	t.Helper()
	run(t, command("dpkg-deb", "--extract", deb, dir))
	bin := filepath.Join(dir, "usr", "bin", "spoold")
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatalf("read the build information of the packaged %s: %v", bin, err)
	}
	want, err := os.ReadFile(filepath.Join(root, "scripts", "gotags"))
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, s := range bi.Settings {
		if s.Key == "-tags" {
			tags = strings.Split(s.Value, ",")
		}
	}
	for _, tag := range strings.Split(strings.TrimSpace(string(want)), ",") {
		if !slices.Contains(tags, tag) {
			t.Errorf("the packaged spoold was built with the tags %q, without %s (scripts/gotags)", tags, tag)
		}
	}
}
