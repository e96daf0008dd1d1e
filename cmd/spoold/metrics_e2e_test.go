package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// startProcs is GOMAXPROCS as the test process started: what a daemon
// started from it finds (a daemon started in this process, as
// TestFailedStartLeavesAnotherPidFile does, sets it).
var startProcs = runtime.GOMAXPROCS(0)

// requirePromtool returns the path of Prometheus's promtool (Debian package
// prometheus, installed by scripts/install-deps.sh). Without it the test
// fails under CI (CI=true) and is skipped elsewhere.
func requirePromtool(t testing.TB) string {
	t.Helper()
	return testenv.LookPath(t, "promtool", "Prometheus's own check of /metrics (Debian package prometheus)")
}

// TestDaemonMetricsPassPromtool checks the running daemon's /metrics with
// Prometheus's own linter, `promtool check metrics`: the exposition
// parses, every family has HELP and TYPE, names follow the naming rules
// (counters end in _total, base units). It also wants the Go runtime's and
// the process's metrics beside spoold's own.
func TestDaemonMetricsPassPromtool(t *testing.T) {
	promtool := requirePromtool(t)
	dir := t.TempDir()
	f := startFleet(t, 2)
	p := startDaemon(t, daemonArgs(dir, f, "--write-delay", "1s", "--write-jitter", "0s", "--writers", "3", "--gc-percent", "75")...)
	p.waitFor(t, "a poll cycle and an RRD update", func(st map[string]any) bool {
		return num(st, "last_cycle", "seq") >= 1 && num(st, "writer", "update_calls") > 0
	})
	body := get(t, p.admin+"/metrics")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	text := string(body)
	for _, family := range []string{
		"go_goroutines", "go_memstats_heap_alloc_bytes", "process_cpu_seconds_total", "process_resident_memory_bytes",
		"spoold_build_info", "spoold_spool_written_entries_total", "spoold_index_keys", "spoold_loader_running",
		"spoold_writer_update_calls_total", "spoold_poller_last_cycle_seq", "spoold_target_health",
	} {
		if !strings.Contains(text, "\n# TYPE "+family+" ") {
			t.Errorf("/metrics has no family %s", family)
		}
	}
	// --gomaxprocs 0: the CPUs this test process found at its start too,
	// plus a P for each of the 3 writers.
	cfg := defaultConfig()
	cfg.writer.Writers = 3
	want := fmt.Sprintf("\ngo_sched_gomaxprocs_threads %d\n", cfg.procs(os.Getenv("GOMAXPROCS") != "", startProcs))
	if !strings.Contains(text, want) {
		t.Errorf("/metrics has no line %q", strings.TrimSpace(want))
	}
	// --gc-percent 75: the collector's GOGC, in /metrics and the started
	// line.
	if want := "\ngo_gc_gogc_percent 75\n"; !strings.Contains(text, want) {
		t.Errorf("/metrics has no line %q", strings.TrimSpace(want))
	}
	if !regexp.MustCompile(`msg="spoold started".* gogc=75 `).MatchString(p.stderr.String()) {
		t.Errorf("no gogc=75 in the started line:\n%s", p.stderr.String())
	}
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}
