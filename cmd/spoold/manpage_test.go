package main

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// helpFlag is a flag as a page or --help shows it: its group, its term
// ("-t, --test", "--targets string") and its text with the default.
type helpFlag struct{ group, term, text string }

// helpFlags reads `spoold --help`.
func helpFlags(t *testing.T) map[string]helpFlag {
	t.Helper()
	var out, errOut bytes.Buffer
	if code := run([]string{"--help"}, &out, &errOut); code != exitOK {
		t.Fatalf("spoold --help: exit %d: %s", code, errOut.String())
	}
	row := regexp.MustCompile(`^ +(-\w, )?--([a-z0-9-]+)(\[=true\|false\])?( \S+)? {2,}(.*)$`)
	flags, group := map[string]helpFlag{}, ""
	for _, l := range strings.Split(out.String(), "\n") {
		if g, ok := strings.CutSuffix(l, ":"); ok && !strings.HasPrefix(l, " ") {
			group = g
		} else if m := row.FindStringSubmatch(l); m != nil {
			flags[m[2]] = helpFlag{group, m[1] + "--" + m[2] + m[4], m[5]}
		}
	}
	if len(flags) < 30 {
		t.Fatalf("read only %d flags from spoold --help:\n%s", len(flags), out.String())
	}
	return flags
}

// pageFlags reads the OPTIONS of a spoold(8) page, roff escapes and font
// changes undone.
func pageFlags(t *testing.T, page string) map[string]helpFlag {
	t.Helper()
	plain := strings.NewReplacer(`\-`, "-", `\fB`, "", `\fI`, "", `\fR`, "", `\e`, `\`)
	_, opts, _ := strings.Cut(page, "\n.SH OPTIONS\n")
	opts, _, _ = strings.Cut(opts, "\n.SH ")
	flags, group := map[string]helpFlag{}, ""
	lines := strings.Split(opts, "\n")
	for i := 0; i < len(lines); i++ {
		if g, ok := strings.CutPrefix(lines[i], ".SS "); ok {
			group = g
		} else if lines[i] == ".TP" && i+2 < len(lines) {
			term, text := plain.Replace(lines[i+1]), plain.Replace(lines[i+2])
			name := regexp.MustCompile(`--([a-z0-9-]+)`).FindStringSubmatch(term)
			if name == nil {
				t.Fatalf("spoold(8): an option without a --flag: %q", term)
			}
			flags[name[1]] = helpFlag{group, term, text}
			i += 2
		}
	}
	return flags
}

// TestManPageHasEveryFlagOfHelp: spoold(8), as `spoold manpage` writes it
// for make install, has every flag of `spoold --help` under the same
// group, with the same value name, text and default, and no other.
func TestManPageHasEveryFlagOfHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"manpage"}, &out, &errOut); code != exitOK {
		t.Fatalf("spoold manpage: exit %d: %s", code, errOut.String())
	}
	help, page := helpFlags(t), pageFlags(t, out.String())
	for name, h := range help {
		p, ok := page[name]
		if !ok {
			t.Errorf("spoold(8) lacks --%s of --help", name)
		} else if p != h {
			t.Errorf("--%s: spoold(8) says\n\t%+v\n--help says\n\t%+v", name, p, h)
		}
	}
	for name := range page {
		if _, ok := help[name]; !ok {
			t.Errorf("spoold(8) has --%s, which --help does not", name)
		}
	}
	for _, c := range commands {
		if !strings.Contains(out.String(), ".B "+c.name+"\n") {
			t.Errorf("spoold(8) lacks the command %s", c.name)
		}
	}
}

// TestManPageIsValidRoff: groff formats spoold(8) with every warning on
// and prints none.
func TestManPageIsValidRoff(t *testing.T) {
	requireTool(t, "groff", "groff-base")
	var page, errOut bytes.Buffer
	if code := run([]string{"manpage"}, &page, &errOut); code != exitOK {
		t.Fatalf("spoold manpage: exit %d: %s", code, errOut.String())
	}
	cmd := exec.Command("groff", "-man", "-Tutf8", "-ww", "-z")
	cmd.Stdin = &page
	if msg, err := cmd.CombinedOutput(); err != nil || len(msg) > 0 {
		t.Fatalf("groff -man -ww: %v\n%s", err, msg)
	}
}

// requireTool ends the test (testenv.Missing) when the command is
// missing; pkg is the Debian package with it.
func requireTool(t *testing.T, command, pkg string) {
	t.Helper()
	testenv.LookPath(t, command, "Debian package "+pkg)
}
