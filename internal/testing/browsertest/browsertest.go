// Package browsertest runs headless Chromium (Debian's chromium) for tests
// of the admin page: a DOM dump after the page's scripts ran, and a
// screenshot (Run: one chromium process per call, waited for), or a page
// driven over the DevTools protocol, clicked and typed into (Start).
package browsertest

import (
	"bytes"
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// Binary returns the chromium binary, or skips the test loudly if it is
// not installed.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		testenv.Missing(t, "chromium is not installed (scripts/install-deps.sh installs it); the admin page was not tested in a browser")
	}
	return bin
}

// Run runs headless Chromium with args plus the flags that keep it off the
// network and quiet, bounded by a timeout, and returns its standard output.
func Run(t testing.TB, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(baseFlags(t), args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.Bytes()
}

// baseFlags keep chromium headless, off the network and quiet, with a
// profile of its own.
func baseFlags(t testing.TB) []string {
	return []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir=" + t.TempDir()}
}

// Images reads what the admin page's script wrote on <body> once every
// graph image settled: how many rendered (naturalWidth > 0), how many
// failed, and whether all settled. ok is false if the script did not run.
func Images(dom string) (loaded, failed int, done, ok bool) {
	attr := func(name string) (int, bool) {
		m := regexp.MustCompile(`<body[^>]*` + name + `="(\d+)"`).FindStringSubmatch(dom)
		if m == nil {
			return 0, false
		}
		n, _ := strconv.Atoi(m[1])
		return n, true
	}
	loaded, ok = attr("data-images-loaded")
	failed, _ = attr("data-images-failed")
	d, _ := attr("data-images-done")
	return loaded, failed, d == 1, ok
}
