package main

import (
	"bytes"
	"html"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"

	"github.com/spoold/spoold/admin"
)

// TestDemoShowsInterfacePages runs `spoold demo` as a user does (a small
// fleet, fast polls) and checks what it is for: the if-mib profile
// discovers each simulated switch's interfaces (vendor numbering), every
// answering switch's device page lists its interfaces once each, up or
// down, some down across the fleet, with a traffic graph that librrd
// draws from the interface's own file; SIGTERM ends it cleanly with the
// files in place, one per interface.
func TestDemoShowsInterfacePages(t *testing.T) {
	requireRRDTool(t)
	const devices, interfaces = 12, 4
	dir := filepath.Join(t.TempDir(), "demo")
	p := startDaemon(t, "demo", "--dir", dir, "--devices", "12", "--interfaces", "4",
		"--poll-interval", "1s", "--admin-listen", "127.0.0.1:0")
	st := p.waitFor(t, "3 cycles and values written", func(st map[string]any) bool {
		return num(st, "last_cycle", "seq") >= 3 && num(st, "writer", "values_written") > 0
	})
	targets, _ := st["targets"].([]any)
	if len(targets) != devices {
		t.Fatalf("%d targets in /status, want %d", len(targets), devices)
	}
	graphSrc := regexp.MustCompile(`data-src="(/graph\?[^"]*template=traffic[^"]*)"`)
	listed, down, drawn := 0, 0, false
	for _, x := range targets {
		name, _ := x.(map[string]any)["name"].(string)
		page := string(get(t, p.admin+admin.DeviceURL(name)))
		rows := deviceRow.FindAllStringSubmatch(page, -1)
		if len(rows) == 0 {
			continue // a dead switch of the demo's fleet
		}
		listed++
		seen := map[string]bool{}
		for _, m := range rows {
			if n := html.UnescapeString(m[2]); n == "" || seen[n] {
				t.Errorf("%s: interface name %q empty or listed twice", name, n)
			} else {
				seen[n] = true
			}
			switch m[1] {
			case "down":
				down++
			case "up":
			default:
				t.Errorf("%s: interface %s in state %q, want up or down", name, m[2], m[1])
			}
		}
		if len(rows) != interfaces {
			t.Errorf("%s: %d interfaces on its page, want %d", name, len(rows), interfaces)
		}
		if m := graphSrc.FindStringSubmatch(page); m != nil && !drawn {
			if img := get(t, p.admin+html.UnescapeString(m[1])); !bytes.HasPrefix(img, []byte("\x89PNG")) {
				t.Errorf("%s: the traffic graph %s is not a PNG", name, m[1])
			}
			drawn = true
		}
	}
	if listed < devices/2 || down == 0 || !drawn {
		t.Errorf("%d of %d switches list interfaces, %d interfaces down, a traffic graph drawn: %v; want most, some, yes", listed, devices, down, drawn)
	}
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("demo exited with %v after SIGTERM:\n%s", err, p.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "rrd", "*", "*.rrd"))
	if len(files) < listed*interfaces {
		t.Errorf("%d interface files after the demo, %d switches listed %d interfaces each", len(files), listed, interfaces)
	}
}
