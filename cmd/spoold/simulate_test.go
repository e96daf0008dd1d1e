package main

import (
	"io"
	"testing"

	"github.com/spf13/pflag"
	"github.com/spoold/spoold/simulate"
)

// TestSimulateDocMatchesHelp keeps the simulator's table in
// docs/configuration.md in sync with `spoold simulate --help`: every flag
// documented with its default, every documented flag defined.
func TestSimulateDocMatchesHelp(t *testing.T) {
	doc := readDocFlagsIn(t, "Simulator flags")
	o := simulate.DefaultOptions()
	fs := simulateFlags(&o, &simulateCLI{targetRetries: -1}, io.Discard)
	fs.VisitAll(func(f *pflag.Flag) {
		d, ok := doc[f.Name]
		switch {
		case !ok:
			t.Errorf("spoold simulate --%s (default %q) is not documented in docs/configuration.md", f.Name, f.DefValue)
		case d.def != f.DefValue:
			t.Errorf("spoold simulate --%s: docs/configuration.md says default %q, the flag's default is %q", f.Name, d.def, f.DefValue)
		}
	})
	for name := range doc {
		if fs.Lookup(name) == nil {
			t.Errorf("docs/configuration.md documents spoold simulate --%s, which it does not define", name)
		}
	}
}

// TestSimulateFlagsReachTheOptions: the fleet's flags set its options, and
// a bad value is refused with the flag's name.
func TestSimulateFlagsReachTheOptions(t *testing.T) {
	o := simulate.DefaultOptions()
	fs := simulateFlags(&o, &simulateCLI{}, io.Discard)
	err := fs.Parse([]string{"--numbering", "vendor", "--interfaces", "96", "--down", "10%", "--no-hc", "0.2",
		"--renumber", "5%", "--max-message-size", "1472", "--max-bulk-varbinds", "50"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Numbering != simulate.Vendor || o.Interfaces != 96 || o.Down != 0.1 || o.NoHC != 0.2 || o.Renumber != 0.05 ||
		o.MaxMessageSize != 1472 || o.MaxBulkVarbinds != 50 {
		t.Errorf("options %+v", o)
	}
	if err := simulateFlags(&o, &simulateCLI{}, io.Discard).Parse([]string{"--numbering", "cisco"}); err == nil {
		t.Error("--numbering cisco accepted")
	}
}
