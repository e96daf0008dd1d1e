package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

var soakMinutes = flag.Int("soak-minutes", 0, "minutes of TestSoak (0 skips it; make soak runs 20)")

// The soak's fleet, its sampling, and the bounds it holds the daemon to.
const (
	soakDevices     = 1000
	soakConcurrency = 256 // --poll-concurrency: each poll in flight holds one UDP socket
	soakSample      = 10 * time.Second
	// soakRSSGrowthPct bounds the growth of the mean resident memory of
	// the last window over the first.
	soakRSSGrowthPct = 10.0
	// soakFDsMax bounds the open descriptors at any sample: one UDP socket
	// per poll in flight; one /proc/thread-self/io per OS thread that
	// measured a spool write or an RRD update (diskstat.OnThread keeps it
	// open, and the Go runtime keeps its threads: about one per poll
	// blocked in a file system call, 249 threads with 256 polls in
	// flight); one per device, whose open spool segment holds its
	// descriptor between appends (--segment-open-files is half the
	// open-files limit); and 64 for the rest (listeners, the lock, the
	// writers' RRD files, the loader's directories).
	soakFDsMax = 2*soakConcurrency + soakDevices + 64
)

// soakGoroutinesEnv names a file into which the daemon process of TestSoak
// (this test binary run as spoold) writes runtime.NumGoroutine() every
// second. The daemon exposes no goroutine count; this test-only sampler,
// in the daemon's own process, adds one goroutine and nothing to spoold.
const soakGoroutinesEnv = "SPOOLD_SOAK_GOROUTINES_FILE"

func init() {
	if path := os.Getenv(soakGoroutinesEnv); path != "" && os.Getenv(childEnv) == "1" {
		go writeGoroutines(path)
	}
}

// writeGoroutines writes the goroutine count to path every second, through
// a temp file and rename so that a reader never sees half a number.
func writeGoroutines(path string) {
	for range time.Tick(time.Second) {
		tmp := path + ".tmp"
		if os.WriteFile(tmp, []byte(strconv.Itoa(runtime.NumGoroutine())), 0o600) == nil {
			os.Rename(tmp, path)
		}
	}
}

// soakSampleOf is one sample of the daemon process.
type soakSampleOf struct {
	at                          time.Duration // since the daemon started
	rssKiB, threads, fds, gorts int
}

// sampleProcess reads the daemon's VmRSS and Threads (/proc/<pid>/status),
// its open descriptors (/proc/<pid>/fd) and the goroutine count its
// sampler wrote last.
func sampleProcess(pid int, gortsFile string) (soakSampleOf, error) {
	var s soakSampleOf
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return s, fmt.Errorf("read daemon status: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		f := strings.Fields(v)
		switch {
		case len(f) == 0:
		case k == "VmRSS":
			s.rssKiB, _ = strconv.Atoi(f[0])
		case k == "Threads":
			s.threads, _ = strconv.Atoi(f[0])
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return s, fmt.Errorf("list daemon descriptors: %w", err)
	}
	s.fds = len(fds)
	g, err := os.ReadFile(gortsFile)
	if err != nil {
		return s, fmt.Errorf("read daemon goroutine count: %w", err)
	}
	if s.gorts, err = strconv.Atoi(string(g)); err != nil {
		return s, fmt.Errorf("parse daemon goroutine count %q: %w", g, err)
	}
	if s.rssKiB == 0 || s.threads == 0 {
		return s, fmt.Errorf("no VmRSS or Threads in /proc/%d/status", pid)
	}
	return s, nil
}

// soakVerdict compares the first and the last window of the samples.
type soakVerdict struct {
	window                       time.Duration
	first, last                  []soakSampleOf
	rssGrowthPct                 float64
	fdsMax, gortsGrowth, thrGrow int
}

// judgeSoak splits the samples of a run of total into its first and last
// windows of min(5, minutes/3) minutes. Resident memory compares the
// windows' means (the heap breathes with the GC); goroutines and threads
// compare the windows' floors, the fewest seen: a poll cycle's workers
// and a write batch's come and go, a leak raises the floor.
func judgeSoak(samples []soakSampleOf, total time.Duration) soakVerdict {
	v := soakVerdict{window: min(5*time.Minute, total/3)}
	for _, s := range samples {
		v.fdsMax = max(v.fdsMax, s.fds)
		if s.at <= v.window {
			v.first = append(v.first, s)
		}
		if s.at >= total-v.window {
			v.last = append(v.last, s)
		}
	}
	mean := func(w []soakSampleOf) float64 {
		sum := 0
		for _, s := range w {
			sum += s.rssKiB
		}
		return float64(sum) / float64(len(w))
	}
	floor := func(w []soakSampleOf, f func(soakSampleOf) int) int {
		n := f(w[0])
		for _, s := range w {
			n = min(n, f(s))
		}
		return n
	}
	if len(v.first) == 0 || len(v.last) == 0 {
		return v
	}
	v.rssGrowthPct = (mean(v.last) - mean(v.first)) / mean(v.first) * 100
	gorts := func(s soakSampleOf) int { return s.gorts }
	threads := func(s soakSampleOf) int { return s.threads }
	v.gortsGrowth = floor(v.last, gorts) - floor(v.first, gorts)
	v.thrGrow = floor(v.last, threads) - floor(v.first, threads)
	return v
}

// soakStatus is what the soak reads from /status once a minute.
type soakStatus struct {
	cycles, ok, cycleValues, values float64
	spoolErrors, writerErrs         float64
	loaderStarted                   string
}

func readSoakStatus(t *testing.T, c *http.Client, p *daemonProc) soakStatus {
	t.Helper()
	resp, err := c.Get(p.admin + "/status")
	if err != nil {
		t.Fatalf("get /status: %v", err)
	}
	defer resp.Body.Close()
	var st map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatalf("decode /status: %v", err)
	}
	l, _ := st["loader"].(map[string]any)
	started, _ := l["started"].(string)
	errs := 0.0
	if m, ok := st["writer"].(map[string]any)["errors"].(map[string]any); ok {
		for _, n := range m {
			errs += n.(float64)
		}
	}
	return soakStatus{
		cycles: num(st, "last_cycle", "seq"), ok: num(st, "last_cycle", "ok"), cycleValues: num(st, "last_cycle", "values"),
		values: num(st, "writer", "values_written"), spoolErrors: num(st, "spool", "write_errors"),
		writerErrs: errs, loaderStarted: started,
	}
}

// TestSoak polls 1,000 simulated devices every second for -soak-minutes
// with writes (5 s write delay) and rescans (every minute) running, samples
// the daemon's resident memory, open descriptors and goroutines every 10
// s, and holds the last window to the first: memory within
// soakRSSGrowthPct, descriptors at most soakFDsMax, no more goroutines.
// It prints
//
//	soak: minutes=<n> rss_growth_pct=<p> fds_max=<n> goroutines_growth=<n>
func TestSoak(t *testing.T) {
	if *soakMinutes <= 0 {
		t.Skip("soak runs only with -soak-minutes; make soak sets it")
	}
	requireRRDTool(t)
	total := time.Duration(*soakMinutes) * time.Minute
	f := startFleet(t, soakDevices)
	dir := t.TempDir()
	gortsFile := filepath.Join(t.TempDir(), "goroutines")
	t.Setenv(soakGoroutinesEnv, gortsFile)
	p := startDaemon(t, daemonArgs(dir, f, "--poll-interval", "1s", "--poll-timeout", "500ms",
		"--poll-concurrency", strconv.Itoa(soakConcurrency), "--write-delay", "5s", "--write-jitter", "1s",
		"--rescan-interval", "1m", "--log-level", "info")...)
	began := time.Now()
	samples, statuses := soakRun(t, p, gortsFile, began, total)
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("spoold exited with %v after SIGTERM:\n%s", err, tailLines(p.stderr.String(), 40))
	}
	if left := spoolEntries(t, dir); len(left) != 0 {
		t.Errorf("%d segments left in the spool after a clean shutdown", len(left))
	}
	v := judgeSoak(samples, total)
	fmt.Printf("soak: minutes=%d rss_growth_pct=%.1f fds_max=%d goroutines_growth=%d\n",
		*soakMinutes, v.rssGrowthPct, v.fdsMax, v.gortsGrowth)
	checkSoak(t, v, statuses, total)
}

// soakRun samples the daemon every soakSample until total has passed, and
// reads its /status after every sixth sample (a minute); it fails at once
// if the daemon exits.
func soakRun(t *testing.T, p *daemonProc, gortsFile string, began time.Time, total time.Duration) ([]soakSampleOf, []soakStatus) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	// The daemon's sampler writes its first count a second after start.
	time.Sleep(time.Second + 100*time.Millisecond)
	var samples []soakSampleOf
	var statuses []soakStatus
	tick := time.NewTicker(soakSample)
	defer tick.Stop()
	for n := 0; ; n++ {
		s, err := sampleProcess(p.cmd.Process.Pid, gortsFile)
		if err != nil {
			t.Fatalf("sample %d: %v\n%s", n, err, tailLines(p.stderr.String(), 40))
		}
		s.at = time.Since(began)
		samples = append(samples, s)
		if n%6 == 0 {
			st := readSoakStatus(t, c, p)
			statuses = append(statuses, st)
			t.Logf("soak at %s: rss %d KiB, fds %d, goroutines %d, threads %d; cycle %v (ok %v), values written %v",
				s.at.Round(time.Second), s.rssKiB, s.fds, s.gorts, s.threads, st.cycles, st.ok, st.values)
		}
		if s.at >= total {
			return samples, statuses
		}
		select {
		case <-tick.C:
		case err := <-p.exited:
			t.Fatalf("spoold exited during the soak: %v\n%s", err, tailLines(p.stderr.String(), 40))
		}
	}
}

// checkSoak fails the soak on the bounds, and on a daemon that stopped
// polling, writing or rescanning, or had errors doing so.
func checkSoak(t *testing.T, v soakVerdict, sts []soakStatus, total time.Duration) {
	t.Helper()
	t.Logf("soak windows of %s: %d and %d samples; threads growth %d (floor of the last window over the first, for reference)",
		v.window, len(v.first), len(v.last), v.thrGrow)
	if len(v.first) < 3 || len(v.last) < 3 {
		t.Fatalf("windows of %s hold %d and %d samples, want at least 3 each", v.window, len(v.first), len(v.last))
	}
	if v.rssGrowthPct > soakRSSGrowthPct {
		t.Errorf("resident memory grew %.1f%% from the first %s to the last, bound %.0f%%", v.rssGrowthPct, v.window, soakRSSGrowthPct)
	}
	if v.fdsMax > soakFDsMax {
		t.Errorf("%d descriptors open at most, bound %d", v.fdsMax, soakFDsMax)
	}
	if v.gortsGrowth > 0 {
		t.Errorf("goroutines grew by %d from the first %s to the last (floors of the windows)", v.gortsGrowth, v.window)
	}
	first, last := sts[0], sts[len(sts)-1]
	if want := 0.8 * total.Seconds(); last.cycles < want {
		t.Errorf("%v poll cycles in %s, want at least %.0f", last.cycles, total, want)
	}
	// A cycle on a busy machine loses a few devices to the 500 ms timeout;
	// the typical cycle polls them all.
	oks := make([]float64, 0, len(sts))
	for _, st := range sts {
		oks = append(oks, st.ok)
	}
	slices.Sort(oks)
	if med := oks[len(oks)/2]; med < 0.95*soakDevices {
		t.Errorf("the median cycle polled %v of %d devices", med, soakDevices)
	}
	if last.spoolErrors != 0 || last.writerErrs != 0 {
		t.Errorf("spool write errors %v, writer errors %v", last.spoolErrors, last.writerErrs)
	}
	// Writes keep up with the polls: between the first and the last
	// status, the values of 80% of the cycles polled in between.
	polled := (last.cycles - first.cycles) * last.cycleValues
	if written := last.values - first.values; written < 0.8*polled {
		t.Errorf("%.0f values written while %.0f were polled (%v cycles of %v)", written, polled, last.cycles-first.cycles, last.cycleValues)
	}
	walks := map[string]bool{}
	for _, st := range sts {
		walks[st.loaderStarted] = true
	}
	// A walk takes seconds and a rescan follows a minute after it ends:
	// read once a minute, at least every other walk is seen.
	if want := max(2, int(total/time.Minute)/2); len(walks) < want {
		t.Errorf("%d loader walks seen in %s with --rescan-interval 1m, want at least %d", len(walks), total, want)
	}
}

// tailLines is the last n lines of s.
func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestJudgeSoak checks the soak's arithmetic on made-up samples: windows of
// min(5, minutes/3) minutes, memory by means, goroutines by floors.
func TestJudgeSoak(t *testing.T) {
	// samples every 10 s over total; f gives a sample's rss and goroutines
	// from its index.
	samples := func(total time.Duration, f func(i, n int) (int, int)) []soakSampleOf {
		n := int(total/soakSample) + 1
		var s []soakSampleOf
		for i := range n {
			rss, g := f(i, n)
			s = append(s, soakSampleOf{at: time.Duration(i) * soakSample, rssKiB: rss, gorts: g, threads: 10, fds: 100 + i%7})
		}
		return s
	}
	for _, tc := range []struct {
		minutes    int
		f          func(i, n int) (int, int)
		window     time.Duration
		rssPct     float64
		gortsGrown int
	}{
		// Workers come and go: the floor stays.
		{3, func(i, _ int) (int, int) { return 1000, 9 + 256*(i%2) }, time.Minute, 0, 0},
		{20, func(i, _ int) (int, int) { return 1000, 9 + 256*(i%3/2) }, 5 * time.Minute, 0, 0},
		// One goroutine leaked per sample raises the floor.
		{20, func(i, _ int) (int, int) { return 1000, 9 + i }, 5 * time.Minute, 0, 90},
		// Memory up a fifth in the second half.
		{6, func(i, n int) (int, int) { return 1000 + 200*(2*i/n), 9 }, 2 * time.Minute, 20, 0},
	} {
		t.Run(fmt.Sprintf("%dmin/window%s/rss%.0f/gorts%d", tc.minutes, tc.window, tc.rssPct, tc.gortsGrown), func(t *testing.T) {
			total := time.Duration(tc.minutes) * time.Minute
			v := judgeSoak(samples(total, tc.f), total)
			wantSamples := int(tc.window/soakSample) + 1
			if v.window != tc.window || len(v.first) != wantSamples || len(v.last) != wantSamples {
				t.Fatalf("window %s with %d and %d samples, want %s with %d each", v.window, len(v.first), len(v.last), tc.window, wantSamples)
			}
			if math.Abs(v.rssGrowthPct-tc.rssPct) > 0.01 || v.gortsGrowth != tc.gortsGrown || v.fdsMax != 106 {
				t.Errorf("rss growth %.2f%%, goroutines growth %d, fds max %d; want %.0f%%, %d, 106", v.rssGrowthPct, v.gortsGrowth, v.fdsMax, tc.rssPct, tc.gortsGrown)
			}
		})
	}
}
