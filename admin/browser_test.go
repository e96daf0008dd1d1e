package admin

import (
	"bytes"
	"flag"
	"image/png"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoold/spoold/internal/testing/browsertest"
)

var keepScreenshot = flag.String("screenshot", "", "also write the headless Chromium screenshot of the admin page to this file")

// TestPageInChromium loads the admin page in headless Chromium from a real
// server whose graphs are real PNGs: every image must render (the page's own
// script counts naturalWidth > 0 onto <body>), and the screenshot must be a
// PNG of the window's size. The disk card is rendered.
func TestPageInChromium(t *testing.T) {
	bin := browsertest.Binary(t)
	failing := NewTargetStatus(pollerFailing("edge-2", 7, 4), nil)
	failing.WriteError, failing.WriteErrorKind = "open /var/lib/spoold/rrd/edge-2.rrd: permission denied", "permission"
	targets := []TargetStatus{okTarget("core-1"), okTarget("core-2"), okTarget("a b&c"), failing,
		NewTargetStatus(pollerFailing("branch-7", 1, 0), nil)}
	fb := newFakeDaemon(targets...)
	fb.status.WriterErrors = sampleStatus(failing).WriterErrors
	srv := httptest.NewServer(NewHandler(fb, testOptions()))
	defer srv.Close()

	dom := string(browsertest.Run(t, bin, "--virtual-time-budget=10000", "--dump-dom", srv.URL+"/"))
	loaded, failed, done, ok := browsertest.Images(dom)
	if !ok {
		t.Fatalf("the page's image script did not run; DOM:\n%s", dom)
	}
	if loaded != len(targets) || failed != 0 || !done {
		t.Errorf("%d graph images rendered (%d failed, settled %v), want %d; DOM:\n%s", loaded, failed, done, len(targets), dom)
	}
	if !strings.Contains(dom, `id="disk"`) || !strings.Contains(dom, "util · vda1") {
		t.Errorf("the rendered page has no disk card with the device's load")
	}

	shot := filepath.Join(t.TempDir(), "page.png")
	browsertest.Run(t, bin, "--screenshot="+shot, "--window-size=1200,900", "--virtual-time-budget=10000", srv.URL+"/")
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if cfg.Width != 1200 || cfg.Height != 900 {
		t.Errorf("screenshot is %dx%d, want 1200x900", cfg.Width, cfg.Height)
	}
	if *keepScreenshot != "" {
		if err := os.WriteFile(*keepScreenshot, b, 0o644); err != nil {
			t.Error(err)
		}
	}
}
