package main

import (
	"bytes"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoold/spoold/admin"
	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/internal/testing/simtest"
	"github.com/spoold/spoold/simulate"
)

// TestDevicePageListsTheInterfaces runs spoold with the if-mib profile
// against a simulated switch with vendor numbering, some interfaces down,
// that renumbers its interfaces when it restarts: its device page lists
// every interface once with its ifName and ifAlias, a down interface shows
// down and an up one up, each row offers its traffic graph, and the
// profiles file's own template is offered and drawn; after the restart the
// page still lists each name once (none shown gone).
func TestDevicePageListsTheInterfaces(t *testing.T) {
	requireRRDTool(t)
	o := simulate.DefaultOptions()
	o.Devices, o.Interfaces, o.Numbering, o.Down = 1, 8, simulate.Vendor, 0.25
	sim := simtest.Serve(t, o)
	fl := sim.Fleet()
	fl.SetBehavior(0, simulate.Behavior{Renumber: true})
	f := &e2eFleet{sim: sim, targets: writeTargets(t, sim, "sw")}
	profiles := filepath.Join(t.TempDir(), "profiles.conf")
	if err := os.WriteFile(profiles, []byte(deviceProfiles), 0o640); err != nil {
		t.Fatal(err)
	}
	p := startDaemon(t, daemonArgs(t.TempDir(), f, "--profiles", profiles, "--write-delay", "1s", "--write-jitter", "0s")...)
	p.waitFor(t, "2 poll cycles and values written", func(st map[string]any) bool {
		return num(st, "last_cycle", "seq") >= 2 && num(st, "writer", "values_written") > 0
	})
	name := fl.Name(0)

	ifcs := fl.Interfaces(0, time.Now())
	down, aliased := 0, 0
	for _, ifc := range ifcs {
		if !ifc.OperUp {
			down++
		}
		if ifc.Alias != "" {
			aliased++
		}
	}
	if down == 0 || down == len(ifcs) || aliased == 0 {
		t.Fatalf("the simulator has %d of %d interfaces down and %d with an alias, want some of each", down, len(ifcs), aliased)
	}
	checkDevicePage(t, p.admin, name, ifcs)
	// The profiles file's template: offered beside the built-ins, drawn
	// by librrd from a row's file.
	if page := string(get(t, p.admin+admin.DeviceURL(name))); !strings.Contains(page, `class="tmpl" href="/device/`+name+`?template=octets"`) {
		t.Errorf("the device page does not offer the profile's octets template")
	}
	key := name + "/" + fleet.InstanceSegment(ifcs[0].Name)
	if img := get(t, p.admin+admin.GraphKeyURL(key, "octets", nil)); !bytes.HasPrefix(img, []byte("\x89PNG")) {
		t.Errorf("the octets graph of %s is not a PNG", key)
	}

	restart := time.Now()
	fl.Restart(0, restart)
	seq := num(p.status(t), "last_cycle", "seq")
	p.waitFor(t, "3 poll cycles after the restart", func(st map[string]any) bool { return num(st, "last_cycle", "seq") >= seq+3 })
	after := fl.Interfaces(0, time.Now())
	renumbered := false
	for _, a := range after {
		k := slices.IndexFunc(ifcs, func(b simulate.Interface) bool { return b.Port == a.Port })
		renumbered = renumbered || k < 0 || ifcs[k].Index != a.Index
	}
	if !renumbered {
		t.Fatal("the simulator renumbered no interface")
	}
	checkDevicePage(t, p.admin, name, after)
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}

// deviceProfiles is if-mib with a graph template of its own.
const deviceProfiles = `profile sw
  use if-mib
  graph octets
    title {target} {instance} ({alias}) octets
    def   in  in
    def   out out
    line  in  00C000 in
    line  out 0000FF out
`

var deviceRow = regexp.MustCompile(`<figcaption><span class="chip state ([^"]*)">[^<]*</span> ([^<]*?)(?: <span class="muted">([^<]*)</span>)?</figcaption>\s*(<img class="lazy" data-src="[^"]*template=traffic)?`)

// checkDevicePage checks that target's device page lists each of ifcs
// once, with its name, alias and oper state, and a traffic graph.
func checkDevicePage(t *testing.T, base, target string, ifcs []simulate.Interface) {
	t.Helper()
	type row struct{ state, alias string }
	page := string(get(t, base+admin.DeviceURL(target)))
	rows := map[string]row{}
	for _, m := range deviceRow.FindAllStringSubmatch(page, -1) {
		n := html.UnescapeString(m[2])
		if _, dup := rows[n]; dup {
			t.Errorf("the device page lists %s twice", n)
		}
		rows[n] = row{m[1], html.UnescapeString(m[3])}
		if m[4] == "" {
			t.Errorf("row %s has no traffic graph", n)
		}
	}
	if len(rows) != len(ifcs) {
		t.Errorf("the device page lists %d rows, the device has %d interfaces:\n%s", len(rows), len(ifcs), page)
	}
	for _, ifc := range ifcs {
		want := row{"down", ifc.Alias}
		if ifc.OperUp {
			want.state = "up"
		}
		if got, ok := rows[ifc.Name]; !ok || got != want {
			t.Errorf("interface %s (ifIndex %d): row %+v (listed %v), want %+v", ifc.Name, ifc.Index, got, ok, want)
		}
	}
}
