package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/internal/testing/simtest"
	"github.com/spoold/spoold/internal/testing/snmpsimtest"
	"github.com/spoold/spoold/simulate"
)

// TestWalkShowsWhatDiscoveryFinds: spoold walk against simulated gear
// numbered as a vendor does, one device without HC counters: every
// interface with its ifName, key and RRD file, the 32-bit fallback, and
// the rows a filter dropped, with the reason; nothing written.
func TestWalkShowsWhatDiscoveryFinds(t *testing.T) {
	o := simulate.DefaultOptions()
	o.Devices, o.Interfaces, o.Numbering = 2, 48, simulate.Vendor
	sim := simtest.Serve(t, o)
	sim.Fleet().SetBehavior(1, simulate.Behavior{NoHC: true})

	dir := t.TempDir()
	profiles := filepath.Join(dir, "profiles.conf")
	writeFile(t, profiles, `profile ports
  table if
    index    ifIndex
    instance ifName
    filter   ifType == ethernetCsmacd
    column in  ifHCInOctets|ifInOctets COUNTER 0 U
`)
	var targets bytes.Buffer
	if err := sim.Fleet().WriteTargets(&targets, sim.Addr(), "ports", "1s", 1); err != nil {
		t.Fatal(err)
	}
	targetsFile := filepath.Join(dir, "targets.conf")
	writeFile(t, targetsFile, targets.String())
	rrdDir := filepath.Join(dir, "rrd")
	for i, fallback := range []bool{false, true} {
		name := sim.Fleet().Name(i)
		var stdout, stderr bytes.Buffer
		code := run([]string{"walk", "--targets", targetsFile, "--profiles", profiles, "--rrd-dir", rrdDir, name}, &stdout, &stderr)
		out := stdout.String()
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
		polled, dropped := 0, 0
		for _, ifc := range sim.Fleet().Interfaces(i, sim.Fleet().Now()) {
			key := fleet.RowKey(name, fleet.InstanceSegment(ifc.Name))
			if ifc.Type != 6 {
				dropped++
				if line := lineWith(out, fmt.Sprintf("%q", ifc.Name)); !strings.Contains(line, "(not polled)") || strings.Contains(out, key) {
					t.Errorf("%s: the filtered-out %s (ifType %d) is not shown as not polled:\n%s", name, ifc.Name, ifc.Type, out)
				}
				continue
			}
			polled++
			line := lineWith(out, filepath.Join(rrdDir, key+".rrd"))
			want := "in=IF-MIB::ifHCInOctets"
			if fallback {
				want = "in=IF-MIB::ifInOctets (fallback)"
			}
			if !strings.Contains(line, fmt.Sprintf("%q", ifc.Name)) || !strings.Contains(line, want) {
				t.Errorf("%s: interface %s (ifIndex %d): line %q, want its name, file and %s", name, ifc.Name, ifc.Index, line, want)
			}
		}
		if head := fmt.Sprintf("%d rows polled", polled); polled == 0 || dropped == 0 || !strings.Contains(out, head) ||
			!strings.Contains(out, fmt.Sprintf("%d filtered out", dropped)) || !strings.Contains(out, `filter "ifType == ethernetCsmacd": value`) {
			t.Errorf("%s: want %s and %d filtered out with the reason:\n%s", name, head, dropped, out)
		}
	}
	if _, err := os.Stat(rrdDir); !os.IsNotExist(err) {
		t.Errorf("walk touched --rrd-dir: %v", err)
	}
}

// TestWalkSaysWhichColumnsAnswered: spoold walk of a RouterOS agent, which
// has no ifIndex column, lists its 12 interfaces and says the ifIndex
// column answered none of them; of an agent without IF-MIB, that its table
// has no rows and that no column walked answered one.
func TestWalkSaysWhichColumnsAnswered(t *testing.T) {
	a := snmpsimtest.Start(t, map[string][]byte{
		"routeros": snmpsimtest.Recording(t, "routeros"), "bare": snmpsimtest.Recording(t, "vanishing-empty")})
	dir := t.TempDir()
	targets := filepath.Join(dir, "targets.conf")
	writeFile(t, targets, fmt.Sprintf("routeros 127.0.0.1:%d profile=if-mib community=routeros\nbare 127.0.0.1:%[1]d profile=if-mib community=bare\n", a.Port))
	walk := func(target string) string {
		var stdout, stderr bytes.Buffer
		if code := run([]string{"walk", "--targets", targets, "--rrd-dir", filepath.Join(dir, "rrd"), target}, &stdout, &stderr); code != exitOK {
			t.Fatalf("walk %s: exit %d: %s", target, code, stderr.String())
		}
		return stdout.String()
	}
	out := walk("routeros")
	for _, want := range []string{"12 rows polled", "rows answering each column walked: IF-MIB::ifIndex 0, IF-MIB::ifName 12, IF-MIB::ifDescr 12, IF-MIB::ifAlias 0, IF-MIB::ifHCInOctets 12"} {
		if !strings.Contains(out, want) || strings.Contains(out, "no rows") {
			t.Errorf("walk routeros: no %q:\n%s", want, out)
		}
	}
	for _, p := range snmpsimtest.IfMIBPorts("routeros") {
		if !strings.Contains(out, filepath.Join(dir, "rrd", "routeros", p.Segment+".rrd")) {
			t.Errorf("walk routeros: no file of %s:\n%s", p.Segment, out)
		}
	}
	out = walk("bare")
	for _, want := range []string{"0 rows polled", "IF-MIB::ifIndex 0, IF-MIB::ifName 0, IF-MIB::ifDescr 0", "no rows: the device answers none of the columns walked"} {
		if !strings.Contains(out, want) {
			t.Errorf("walk bare: no %q:\n%s", want, out)
		}
	}
}

func lineWith(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
