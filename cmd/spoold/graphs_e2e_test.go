package main

import (
	"bytes"
	"image/png"
	"net/http"
	"regexp"
	"syscall"
	"testing"

	"github.com/spoold/spoold/admin"
	"github.com/spoold/spoold/internal/browsertest"
)

// TestHostGraphsOfARunningDaemon polls simulated hosts with the host
// profile: the daemon offers the cpu, load and memory templates for them,
// draws each from the real RRD file with librrd, refuses a template the
// profile has no data for and a row key without a file, and the admin page
// shows the hosts' cpu graphs, rendered in Chromium.
func TestHostGraphsOfARunningDaemon(t *testing.T) {
	requireRRDTool(t)
	bin := browsertest.Binary(t)
	sim := startSimulator(t, 2)
	f := &e2eFleet{sim: sim, targets: writeTargets(t, sim, "host")}
	p := startDaemon(t, daemonArgs(t.TempDir(), f, "--write-delay", "1s", "--write-jitter", "0s")...)
	p.waitFor(t, "2 cycles and values written", func(st map[string]any) bool {
		return num(st, "last_cycle", "seq") >= 2 && num(st, "writer", "values_written") > 0
	})
	name := sim.Fleet().Name(0)
	for _, tmpl := range []string{"cpu", "load", "memory"} {
		img := get(t, p.admin+admin.GraphKeyURL(name, tmpl, nil))
		if cfg, err := png.DecodeConfig(bytes.NewReader(img)); err != nil || cfg.Width <= admin.DefaultGraphWidth {
			t.Errorf("%s graph of %s: %v %+v", tmpl, name, err, cfg)
		}
	}
	for _, u := range []string{admin.GraphKeyURL(name, "traffic", nil), admin.GraphKeyURL(name+"/eth0", "traffic", nil)} {
		resp, err := http.Get(p.admin + u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", u, resp.Status)
		}
	}
	cpuImg := regexp.MustCompile(`<img src="[^"]*template=cpu`)
	dom := string(browsertest.Run(t, bin, "--virtual-time-budget=4000", "--dump-dom", p.admin+"/"))
	loaded, failed, done, ok := browsertest.Images(dom)
	if !ok || loaded != 2 || failed != 0 || !done || len(cpuImg.FindAllString(dom, -1)) != 2 {
		t.Errorf("the page's host graphs: %d rendered, %d failed, settled %v, %d cpu graphs; want 2 cpu graphs rendered",
			loaded, failed, done, len(cpuImg.FindAllString(dom, -1)))
	}
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}
