package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// loadRequest is one kind of request the admin load generator sends.
type loadRequest struct {
	method, path string
	token        string // bearer token sent, if any
	want         int    // the expected status code
	// every > 0: a goroutine of its own sends it at this interval,
	// instead of the workers taking turns (a flush per poll cycle).
	every time.Duration
}

// loadStats are what a load run saw.
type loadStats struct {
	requests   int
	unexpected map[string]int // "<method> <path> -> <code or error>" → count
	latencies  []time.Duration
	elapsed    time.Duration
}

// loadGen sends admin requests on loopback and records the answers.
type loadGen struct {
	base   string
	client *http.Client
	tokens chan struct{} // nil: no rate limit

	mu sync.Mutex
	st loadStats
}

// adminLoad sends reqs to base until ctx ends: the shared ones
// round-robin from workers goroutines, each starting at its own offset,
// at most rate per second in all (0: as fast as answered), and each
// request with an interval (every) from a goroutine of its own.
func adminLoad(ctx context.Context, base string, workers int, rate float64, reqs []loadRequest) loadStats {
	g := &loadGen{base: base, st: loadStats{unexpected: map[string]int{}},
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}, Timeout: time.Minute}}
	defer g.client.CloseIdleConnections()
	t0 := time.Now()
	var wg sync.WaitGroup
	if rate > 0 {
		g.tokens = make(chan struct{})
		wg.Go(func() { meter(ctx, g.tokens, time.Duration(float64(time.Second)/rate)) })
	}
	common := slices.DeleteFunc(slices.Clone(reqs), func(r loadRequest) bool { return r.every > 0 })
	for w := range workers {
		wg.Go(func() { g.send(ctx, common, w, g.tokens) })
	}
	for _, r := range reqs {
		if r.every > 0 {
			ticks := make(chan struct{})
			wg.Go(func() { meter(ctx, ticks, r.every) })
			wg.Go(func() { g.send(ctx, []loadRequest{r}, 0, ticks) })
		}
	}
	wg.Wait()
	g.st.elapsed = time.Since(t0)
	return g.st
}

// meter hands out a token every interval until ctx ends (the first at
// once); a token not taken in time is skipped.
func meter(ctx context.Context, tokens chan<- struct{}, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case tokens <- struct{}{}:
		case <-ctx.Done():
			return
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
	}
}

// send sends reqs in turn from offset i, each after a token if tokens is
// not nil, until ctx ends.
func (g *loadGen) send(ctx context.Context, reqs []loadRequest, i int, tokens <-chan struct{}) {
	for ; ctx.Err() == nil; i++ {
		if tokens != nil {
			select {
			case <-tokens:
			case <-ctx.Done():
				return
			}
		}
		r := reqs[i%len(reqs)]
		start := time.Now()
		got, ok := g.do(ctx, r)
		if ctx.Err() != nil {
			return // cut short by the end of the run, not by the daemon
		}
		g.mu.Lock()
		g.st.requests++
		g.st.latencies = append(g.st.latencies, time.Since(start))
		if !ok {
			g.st.unexpected[r.method+" "+r.path+" -> "+got]++
		}
		g.mu.Unlock()
	}
}

// do sends one request and returns its status code (or error) and whether
// it was the expected one.
func (g *loadGen) do(ctx context.Context, r loadRequest) (string, bool) {
	req, err := http.NewRequestWithContext(ctx, r.method, g.base+r.path, nil)
	if err != nil {
		return err.Error(), false
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return err.Error(), false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return fmt.Sprint(resp.StatusCode), resp.StatusCode == r.want
}

// percentile returns the p-th percentile (0..1) of the latencies.
func (s *loadStats) percentile(p float64) time.Duration {
	if len(s.latencies) == 0 {
		return 0
	}
	l := slices.Clone(s.latencies)
	slices.Sort(l)
	return l[min(len(l)-1, int(p*float64(len(l))))]
}

// adminRequests are the admin endpoints a user and a monitoring system
// call: status, metrics, the page, graphs of a target (and of an unknown
// one: 404), flushes without the token (401), and a flush with the token
// every flushEvery.
func adminRequests(target, token string, flushEvery time.Duration) []loadRequest {
	return []loadRequest{
		{method: "GET", path: "/status", want: 200},
		{method: "GET", path: "/metrics", want: 200},
		{method: "GET", path: "/", want: 200},
		{method: "GET", path: "/graph/" + target + ".png", want: 200},
		{method: "GET", path: "/status", want: 200},
		{method: "GET", path: "/metrics", want: 200},
		{method: "POST", path: "/flush", token: token, want: 200, every: flushEvery},
		{method: "POST", path: "/flush", want: 401},
		{method: "GET", path: "/graph/nosuchtarget.png", want: 404},
	}
}

// TestAdminUnderConcurrentLoad hammers the admin endpoints from 8
// connections while spoold polls every second and flushes: every answer
// is the expected one, and the poll cycles go on and are written, no
// device failing and no spool write failing. The load runs in 5 s rounds until it has sent
// 50 requests (a loaded machine answers fewer a second). (How much the
// load slows a cycle, and so how many polls its deadline cuts, is measured
// by BenchmarkAdminLoad, not asserted here.)
func TestAdminUnderConcurrentLoad(t *testing.T) {
	requireRRDTool(t)
	if testing.Short() {
		t.Skip("runs the daemon under load")
	}
	f := startFleet(t, 20)
	dir := t.TempDir()
	const token = "load-test-token"
	p := startDaemon(t, daemonArgs(dir, f, "--poll-interval", "1s", "--write-delay", "1s",
		"--write-jitter", "0", "--admin-token", token)...)
	p.waitFor(t, "a cycle and the loader", func(st map[string]any) bool {
		return num(st, "last_cycle", "seq") >= 1 && loaderDone(st)
	})
	before := p.status(t)
	st := loadStats{unexpected: map[string]int{}}
	for began := time.Now(); st.requests < 50 && time.Since(began) < 2*time.Minute; {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		round := adminLoad(ctx, p.admin, 8, 0, adminRequests(f.sim.Fleet().Name(0), token, time.Second))
		cancel()
		st.requests, st.elapsed = st.requests+round.requests, st.elapsed+round.elapsed
		st.latencies = append(st.latencies, round.latencies...)
		for k, n := range round.unexpected {
			st.unexpected[k] += n
		}
	}
	after := p.status(t)
	t.Logf("admin load: %d requests in %s (%.0f/s), p50 %s, p99 %s", st.requests, st.elapsed.Round(time.Millisecond),
		float64(st.requests)/st.elapsed.Seconds(), st.percentile(0.5), st.percentile(0.99))
	if len(st.unexpected) > 0 {
		t.Errorf("unexpected answers: %v", st.unexpected)
	}
	if st.requests < 50 {
		t.Errorf("only %d requests in %s", st.requests, st.elapsed)
	}
	cycles := num(after, "last_cycle", "seq") - num(before, "last_cycle", "seq")
	if cycles < 2 {
		t.Errorf("%v poll cycles during %s of load at 1 s intervals", cycles, st.elapsed)
	}
	ok, overrun := num(after, "last_cycle", "ok"), num(after, "last_cycle", "overrun")+num(after, "last_cycle", "stopped")
	if failed := num(after, "last_cycle", "failed"); failed != 0 || ok+overrun != 20 || num(after, "spool", "write_errors") != 0 {
		t.Errorf("last cycle under load: ok %v, failed %v, cut by the deadline %v of 20; spool write errors %v", ok, failed, overrun, num(after, "spool", "write_errors"))
	}
	if written := num(after, "writer", "values_written") - num(before, "writer", "values_written"); written == 0 {
		t.Errorf("no values written during the load")
	}
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.stderr)
	}
}

var (
	loadDevices = flag.Int("adminload-devices", 1000, "devices of BenchmarkAdminLoad")
	loadWorkers = flag.Int("adminload-workers", 8, "concurrent admin connections of BenchmarkAdminLoad")
	loadRate    = flag.Float64("adminload-rate", 0, "admin requests per second of BenchmarkAdminLoad (0 = as fast as answered)")
	loadRounds  = flag.Int("adminload-rounds", 8, "rounds of unloaded then loaded cycles in BenchmarkAdminLoad")
	loadCycles  = flag.Int("adminload-cycles", 2, "poll cycles measured per phase and round in BenchmarkAdminLoad")
	loadCache   = flag.Duration("adminload-status-cache", 250*time.Millisecond, "--admin-status-cache of the daemon in BenchmarkAdminLoad (0: render every request)")
	loadOnly    = flag.String("adminload-only", "", "send only the requests whose path contains this, or is it with a leading = (BenchmarkAdminLoad)")
)

// benchRequests are adminRequests, filtered by -adminload-only.
func benchRequests(target, token string) []loadRequest {
	all := adminRequests(target, token, 2*time.Second) // a flush per poll cycle
	if *loadOnly == "" {
		return all
	}
	var some []loadRequest
	for _, r := range all {
		if exact, ok := strings.CutPrefix(*loadOnly, "="); ok && r.path == exact || !ok && strings.Contains(r.path, *loadOnly) {
			some = append(some, r)
		}
	}
	return some
}

// BenchmarkAdminLoad measures the poll cycle time of spoold (-adminload-
// devices simulated devices, 2 s interval) without and with the admin
// endpoints under concurrent load (-adminload-workers connections at
// -adminload-rate), in -adminload-rounds rounds of -adminload-cycles
// unloaded then as many loaded cycles, as the medians of each. The goal:
// loaded within 20% of unloaded. bench/adminload.sh runs it.
func BenchmarkAdminLoad(b *testing.B) {
	requireRRDTool(b)
	for range b.N {
		benchAdminLoad(b)
	}
}

func benchAdminLoad(b *testing.B) {
	b.StopTimer()
	f := startFleet(b, *loadDevices)
	dir := b.TempDir()
	const token = "bench-token"
	p := startDaemon(b, daemonArgs(dir, f, "--poll-interval", "2s", "--write-delay", "2s",
		"--write-jitter", "0", "--admin-token", token, "--poll-concurrency", "256", "--admin-status-cache", loadCache.String())...)
	p.waitFor(b, "the loader and a first cycle", func(st map[string]any) bool {
		return num(st, "last_cycle", "seq") >= 2 && loaderDone(st)
	})
	b.StartTimer()
	var unloaded, loaded []time.Duration
	st := loadStats{unexpected: map[string]int{}}
	for range *loadRounds {
		unloaded = append(unloaded, cycleTimes(b, p, *loadCycles, nil)...)
		loaded = append(loaded, cycleTimes(b, p, *loadCycles, func(ctx context.Context) {
			s := adminLoad(ctx, p.admin, *loadWorkers, *loadRate, benchRequests(f.sim.Fleet().Name(0), token))
			st.requests += s.requests
			st.elapsed += s.elapsed
			st.latencies = append(st.latencies, s.latencies...)
			for k, n := range s.unexpected {
				st.unexpected[k] += n
			}
		})...)
	}
	b.StopTimer()
	p.stop(b, syscall.SIGTERM)
	u, l := median(unloaded), median(loaded)
	b.ReportMetric(u.Seconds()*1000, "cycle-ms-unloaded")
	b.ReportMetric(l.Seconds()*1000, "cycle-ms-loaded")
	b.ReportMetric(l.Seconds()/u.Seconds(), "loaded/unloaded")
	b.ReportMetric(float64(st.requests)/st.elapsed.Seconds(), "admin-req/s")
	fmt.Printf("adminload: devices=%d workers=%d rate=%g status_cache=%s cycles=%dx%d unloaded_median_ms=%.1f loaded_median_ms=%.1f ratio=%.3f requests=%d req_per_s=%.0f p50_ms=%.1f p99_ms=%.1f unexpected=%v\n",
		*loadDevices, *loadWorkers, *loadRate, *loadCache, *loadRounds, *loadCycles, u.Seconds()*1000, l.Seconds()*1000, l.Seconds()/u.Seconds(),
		st.requests, float64(st.requests)/st.elapsed.Seconds(), st.percentile(0.5).Seconds()*1000, st.percentile(0.99).Seconds()*1000, st.unexpected)
	if len(st.unexpected) > 0 {
		b.Errorf("unexpected answers: %v", st.unexpected)
	}
}

// cycleTimes returns the durations of n poll cycles that start after the
// call, with load running (until the last of them ends) if it is not nil.
func cycleTimes(b *testing.B, p *daemonProc, n int, load func(ctx context.Context)) []time.Duration {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if load != nil {
			load(ctx)
		}
	}()
	seen := map[float64]time.Duration{}
	first := num(p.status(b), "last_cycle", "seq")
	p.waitFor(b, fmt.Sprintf("%d poll cycles", n), func(st map[string]any) bool {
		if seq := num(st, "last_cycle", "seq"); seq > first+1 { // the cycle running at the switch is mixed
			seen[seq] = time.Duration(num(st, "last_cycle", "duration_seconds") * float64(time.Second))
		}
		return len(seen) >= n
	})
	cancel()
	<-done
	var d []time.Duration
	for _, v := range seen {
		d = append(d, v)
	}
	return d
}

func median(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}
