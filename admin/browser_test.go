package admin

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"
)

var keepScreenshot = flag.String("screenshot", "", "also write the headless Chromium screenshot of the admin page to this file")

// chromium runs headless Chromium with args plus the usual quiet flags,
// bounded by a timeout, and returns its standard output.
func chromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.Bytes()
}

// TestPageInChromium loads the admin page in headless Chromium from a real
// server whose graphs are real PNGs: every image must render (the page's own
// script counts naturalWidth > 0 onto <body>), and the screenshot must be a
// PNG of the window's size.
func TestPageInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("SKIPPED: chromium not installed (scripts/install-deps.sh installs it); the admin page was not tested in a browser")
	}
	failing := NewTargetStatus(pollerFailing("edge-2", 7, 4), nil)
	failing.WriteError, failing.WriteErrorKind = "open /var/lib/spoold/rrd/edge-2.rrd: permission denied", "permission"
	targets := []TargetStatus{okTarget("core-1"), okTarget("core-2"), okTarget("a b&c"), failing,
		NewTargetStatus(pollerFailing("branch-7", 1, 0), nil)}
	fb := newFakeBackend(targets...)
	fb.status.WriterErrors = sampleStatus(failing).WriterErrors
	srv := httptest.NewServer(NewHandler(fb, testOptions()))
	defer srv.Close()

	dom := string(chromium(t, bin, "--virtual-time-budget=10000", "--dump-dom", srv.URL+"/"))
	m := regexp.MustCompile(`<body[^>]*data-images-loaded="(\d+)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the page's image script did not run; DOM:\n%s", dom)
	}
	if loaded, _ := strconv.Atoi(m[1]); loaded != len(targets) {
		t.Errorf("%d graph images rendered, want %d; DOM:\n%s", loaded, len(targets), dom)
	}
	if !regexp.MustCompile(`<body[^>]*data-images-failed="0"`).MatchString(dom) ||
		!regexp.MustCompile(`<body[^>]*data-images-done="1"`).MatchString(dom) {
		t.Errorf("images failed or did not settle; DOM:\n%s", dom)
	}

	shot := filepath.Join(t.TempDir(), "page.png")
	chromium(t, bin, "--screenshot="+shot, "--window-size=1200,900", "--virtual-time-budget=10000", srv.URL+"/")
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
