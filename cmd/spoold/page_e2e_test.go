package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/spoold/spoold/admin"
	"github.com/spoold/spoold/diskstat"
	"github.com/spoold/spoold/internal/testing/browsertest"
)

// TestAdminPageOfARunningDaemon loads the real daemon's admin page in
// headless Chromium once RRD files exist: every graph image renders, the
// screenshot is a PNG; the disk card shows the device of the daemon's
// directories; /status is JSON and /metrics is Prometheus text.
func TestAdminPageOfARunningDaemon(t *testing.T) {
	requireRRDTool(t)
	bin := browsertest.Binary(t)
	f := startFleet(t, 3)
	dir := t.TempDir()
	p := startWrittenDaemon(t, dir, f, 3, "--write-delay", "2s", "--write-jitter", "1s")

	dom := string(browsertest.Run(t, bin, "--virtual-time-budget=4000", "--dump-dom", p.admin+"/"))
	loaded, failed, done, ok := browsertest.Images(dom)
	if !ok || loaded != 3 || failed != 0 || !done {
		t.Fatalf("graphs on the page: %d rendered, %d failed, settled %v (script ran: %v), want 3 rendered", loaded, failed, done, ok)
	}
	if !strings.Contains(dom, `id="disk"`) || !strings.Contains(dom, "RRD updates") {
		t.Errorf("the page has no disk card")
	}
	if dev, err := diskstat.DeviceOf(dir); err == nil && !strings.Contains(dom, "util · "+dev.Name) {
		t.Errorf("the disk card does not show the load of %s, the device of the daemon's directories", dev.Name)
	}
	for i := range 3 {
		if name := f.sim.Fleet().Name(i); !strings.Contains(dom, name) {
			t.Errorf("the page does not list %s", name)
		}
	}
	// A device's page and its graph by key, from the real files.
	name := f.sim.Fleet().Name(0)
	if dev := string(get(t, p.admin+admin.DeviceURL(name))); !strings.Contains(dev, "<h1>") || !strings.Contains(dev, name) {
		t.Errorf("the device page of %s does not show it", name)
	}
	if img := get(t, p.admin+admin.GraphKeyURL(name, "", nil)); !bytes.HasPrefix(img, []byte("\x89PNG")) {
		t.Errorf("/graph?key=%s is not a PNG", name)
	}
	shot := filepath.Join(t.TempDir(), "page.png")
	browsertest.Run(t, bin, "--screenshot="+shot, "--window-size=1280,1000", "--virtual-time-budget=4000", p.admin+"/")
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(b)); err != nil || cfg.Width != 1280 {
		t.Fatalf("screenshot: %v %+v", err, cfg)
	}
	if out := os.Getenv("SPOOLD_SCREENSHOT"); out != "" {
		os.WriteFile(out, b, 0o644)
	}

	var st map[string]any
	if err := json.Unmarshal(get(t, p.admin+"/status"), &st); err != nil {
		t.Fatalf("/status is not JSON: %v", err)
	}
	metrics := string(get(t, p.admin+"/metrics"))
	for _, want := range []string{"# TYPE spoold_writer_values_written_total counter", "spoold_loader_progress", `spoold_target_health{`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(metrics), "\n") {
		if !strings.HasPrefix(line, "#") && len(strings.Fields(line)) < 2 {
			t.Errorf("/metrics line %q is not `name value`", line)
		}
	}
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}

// TestHostGraphsOfARunningDaemon polls simulated hosts with the host
// profile: the daemon offers the cpu, load and memory templates for them,
// draws each from the real RRD file with librrd, refuses a template the
// profile has no data for and a row key without a file, and the admin page
// shows the hosts' cpu graphs, rendered in Chromium.
func TestHostGraphsOfARunningDaemon(t *testing.T) {
	requireRRDTool(t)
	sim := startSimulator(t, 2)
	f := &e2eFleet{sim: sim, targets: writeTargets(t, sim, "host")}
	p := startWrittenDaemon(t, t.TempDir(), f, 2, "--write-delay", "1s", "--write-jitter", "0s")
	name := sim.Fleet().Name(0)
	for _, tmpl := range []string{"cpu", "load", "memory"} {
		img := get(t, p.admin+admin.GraphKeyURL(name, tmpl, nil))
		if cfg, err := png.DecodeConfig(bytes.NewReader(img)); err != nil || cfg.Width <= admin.DefaultGraphWidth {
			t.Errorf("%s graph of %s: %v %+v", tmpl, name, err, cfg)
		}
	}
	wantNotFound(t, p.admin, admin.GraphKeyURL(name, "traffic", nil), admin.GraphKeyURL(name+"/eth0", "traffic", nil))
	bin := browsertest.Binary(t)
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

// TestInterfaceGraphsOfARunningDaemon polls simulated switches with the
// if-mib profile (one RRD file per interface): each row's traffic, packets
// and errors graphs are drawn by librrd from its own file, a row key
// without a file is 404, and the page shows no graph of the switch itself
// (it has no file), so none is broken in Chromium.
func TestInterfaceGraphsOfARunningDaemon(t *testing.T) {
	requireRRDTool(t)
	sim := startSimulator(t, 2)
	f := &e2eFleet{sim: sim, targets: writeTargets(t, sim, "if-mib")}
	dir := t.TempDir()
	p := startWrittenDaemon(t, dir, f, 3, "--write-delay", "1s", "--write-jitter", "0s")
	name := sim.Fleet().Name(0)
	files, err := filepath.Glob(filepath.Join(dir, "rrd", name, "*.rrd"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no interface files of %s: %v", name, err)
	}
	key := name + "/" + strings.TrimSuffix(filepath.Base(files[0]), ".rrd")
	for _, tmpl := range []string{"traffic", "packets", "errors"} {
		img := get(t, p.admin+admin.GraphKeyURL(key, tmpl, nil))
		if cfg, err := png.DecodeConfig(bytes.NewReader(img)); err != nil || cfg.Width <= admin.DefaultGraphWidth {
			t.Errorf("%s graph of %s: %v %+v", tmpl, key, err, cfg)
		}
	}
	wantNotFound(t, p.admin, admin.GraphKeyURL(key, "cpu", nil), admin.GraphKeyURL(name+"/nosuch", "traffic", nil), admin.GraphKeyURL(name, "traffic", nil))
	dom := string(browsertest.Run(t, browsertest.Binary(t), "--virtual-time-budget=4000", "--dump-dom", p.admin+"/"))
	if loaded, failed, done, ok := browsertest.Images(dom); !ok || loaded != 0 || failed != 0 || !done || !strings.Contains(dom, admin.DeviceURL(name)) {
		t.Errorf("the page of switches: %d graphs rendered, %d failed (settled %v, script ran %v); want none of their own and a link to each device page",
			loaded, failed, done, ok)
	}
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}

// wantNotFound checks that each of urls (paths on base) answers 404.
func wantNotFound(t *testing.T, base string, urls ...string) {
	t.Helper()
	for _, u := range urls {
		resp, err := http.Get(base + u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %s, want 404", u, resp.Status)
		}
	}
}

// startWrittenDaemon starts the daemon on f's targets and waits for its
// cycles-th cycle and its first values written.
func startWrittenDaemon(t *testing.T, dir string, f *e2eFleet, cycles float64, extra ...string) *daemonProc {
	t.Helper()
	p := startDaemon(t, daemonArgs(dir, f, extra...)...)
	p.waitFor(t, fmt.Sprintf("%g cycles and values written", cycles), func(st map[string]any) bool {
		return num(st, "last_cycle", "seq") >= cycles && num(st, "writer", "values_written") > 0
	})
	return p
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	return b
}
