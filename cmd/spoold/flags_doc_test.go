package main

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/loader"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/rrdwriter"
)

// docFlag is one row of a flag table in docs/configuration.md.
type docFlag struct {
	group, def, row string
	short           bool // the row names the one-letter form too
}

// readDocFlags reads the tables under "## Flags": the group is the "###"
// heading above the table, the default the first `code` of the second
// cell, or "" for "(empty)".
func readDocFlags(t *testing.T) map[string]docFlag { return readDocFlagsIn(t, "Flags") }

// readDocFlagsIn reads the flag tables under the "## <section>" heading.
func readDocFlagsIn(t *testing.T, section string) map[string]docFlag {
	t.Helper()
	b, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, text, ok := strings.Cut(string(b), "\n## "+section+"\n")
	if !ok {
		t.Fatalf("docs/configuration.md has no \"## %s\" section", section)
	}
	if i := strings.Index(text, "\n## "); i >= 0 {
		text = text[:i]
	}
	long := regexp.MustCompile("`--([a-z0-9-]+)`")
	code := regexp.MustCompile("`([^`]*)`")
	flags := map[string]docFlag{}
	group := ""
	for _, line := range strings.Split(text, "\n") {
		if h, ok := strings.CutPrefix(line, "### "); ok {
			group = strings.TrimSpace(h)
			continue
		}
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| `") || len(cells) < 4 {
			continue
		}
		m := long.FindStringSubmatch(cells[1])
		if m == nil {
			t.Errorf("docs/configuration.md: flag row without a --flag: %s", line)
			continue
		}
		def := ""
		if c := code.FindStringSubmatch(cells[2]); c != nil {
			def = c[1]
		} else if strings.TrimSpace(cells[2]) != "(empty)" {
			t.Errorf("docs/configuration.md: --%s: default %q is neither `value` nor (empty)", m[1], strings.TrimSpace(cells[2]))
		}
		if _, dup := flags[m[1]]; dup {
			t.Errorf("docs/configuration.md documents --%s twice", m[1])
		}
		flags[m[1]] = docFlag{group: group, def: def, row: line, short: regexp.MustCompile("`-[a-zA-Z]`").MatchString(cells[1])}
	}
	return flags
}

// TestConfigurationDocMatchesHelp keeps docs/configuration.md in sync with
// `spoold --help`: every daemon flag is documented under its --help group
// with its default (and its one-letter form), and every documented flag
// exists.
func TestConfigurationDocMatchesHelp(t *testing.T) {
	doc := readDocFlags(t)
	cfg := defaultConfig()
	_, groups := daemonFlags(&cfg)
	seen := map[string]bool{}
	for _, g := range groups {
		g.fs.VisitAll(func(f *pflag.Flag) {
			seen[f.Name] = true
			d, ok := doc[f.Name]
			switch {
			case !ok:
				t.Errorf("--%s (default %q, group %q) is not documented in docs/configuration.md", f.Name, f.DefValue, g.title)
			case d.group != g.title:
				t.Errorf("--%s is documented under %q, --help lists it under %q", f.Name, d.group, g.title)
			case d.def != f.DefValue:
				t.Errorf("--%s: docs/configuration.md says default %q, the flag's default is %q", f.Name, d.def, f.DefValue)
			case f.Shorthand != "" && !d.short:
				t.Errorf("--%s: docs/configuration.md does not name its short form -%s", f.Name, f.Shorthand)
			}
		})
	}
	for name := range doc {
		if !seen[name] {
			t.Errorf("docs/configuration.md documents --%s, which spoold does not define", name)
		}
	}
}

// TestConfigurationDocStatesTheRanges: the range each flag's check
// enforces is written in its row, from the same constants.
func TestConfigurationDocStatesTheRanges(t *testing.T) {
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	doc := readDocFlags(t)
	for flag, want := range map[string]string{
		"poll-retries":         fmt.Sprintf("`0` to `%d`", fleet.MaxRetries),
		"poll-max-varbinds":    fmt.Sprintf("`1` to `%d`", poller.MaxVarbinds),
		"poll-max-repetitions": fmt.Sprintf("`1` to `%d`", poller.MaxRepetitions),
		"poll-max-table-rows":  fmt.Sprintf("`1` to `%d`", poller.MaxTableRows),
		"poll-cycle-timeout":   "`0s` to `--poll-interval`",
		"keys-zone":            "at least `" + formatSize(minKeysZone) + "`",
		"write-rate":           "`0` or `" + num(rrdwriter.MinWriteRate) + "` to `" + num(rrdwriter.MaxWriteRate) + "`",
		"loader-cpu":           "`0` or `" + num(loader.MinCPU*100) + "%` to `100%`",
	} {
		if !strings.Contains(doc[flag].row, want) {
			t.Errorf("docs/configuration.md: the row of --%s does not state its range %s:\n%s", flag, want, doc[flag].row)
		}
	}
}
