// Command warmup measures spoold's restart warm-up for bench/warmup.sh:
//
//	go run ./bench/warmup --spoold BIN --dir DIR --mode segments|files
//
// It serves a simulated fleet on 127.0.0.1, seeds DIR/spool with
// --polls old polls of every target (one segment per target, or one
// single-entry file per poll as spools held before segments), all older
// than the default write delay plus jitter so the backlog is due at once,
// starts the daemon with nginx's default loader settings, requests the
// graph of a random target every second during the start-up walk, and
// prints one line:
//
//	warmup: files=<n> walk_s=<s> first_write_s=<s> drained_s=<s> graph_p99_ms=<ms> graph_failed=<n>
//
// Times count from the daemon's exec. walk_s: until /metrics shows the
// warm-up complete; first_write_s: until the writer updated its first RRD
// file on its own (update calls besides the graphs' priority flushes);
// drained_s: until the walk is complete and no seeded poll is pending (the
// index's oldest pending poll time is after the seeded ones: the daemon's
// own first poll cycle adds entries that are due only after the write
// delay). /metrics is read every 250 ms (the status cache's age).
// The goroutines it starts (simulator, log reader, samplers, graph
// requests) end before it returns.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"github.com/spoold/spoold/simulate"
	"github.com/spoold/spoold/spool"
)

const (
	oidUptime   = "1.3.6.1.2.1.1.3.0"
	oidInOctets = "1.3.6.1.2.1.31.1.1.1.6.1"
	// profiles is the targets' profile: the data sources of the seeded
	// entries, polled from the simulator at the same OIDs.
	profiles = "profile warmup\n  ds up  " + oidUptime + " GAUGE 0\n  ds in1 " + oidInOctets + " COUNTER 0\n"
	step     = 5 * time.Minute // the daemon's default --poll-interval
	// seedAge is how long before now the last seeded poll is: more than
	// the default --write-delay 30m plus --write-jitter 15m.
	seedAge = 50 * time.Minute
	sample  = 250 * time.Millisecond
)

type options struct {
	spoold, dir, mode string
	targets, polls    int
	maxWait           time.Duration
}

func main() {
	var o options
	fs := pflag.NewFlagSet("warmup", pflag.ExitOnError)
	fs.StringVar(&o.spoold, "spoold", "", "spoold binary")
	fs.StringVar(&o.dir, "dir", "", "work directory (spool, rrd, config files; created)")
	fs.StringVar(&o.mode, "mode", "segments", "seeded spool: segments (one per target) or files (one per poll)")
	fs.IntVar(&o.targets, "targets", 20000, "simulated targets")
	fs.IntVar(&o.polls, "polls", 12, "seeded polls per target, 5 minutes apart")
	fs.DurationVar(&o.maxWait, "max-wait", 8*time.Minute, "give up waiting for the drain after this long")
	_ = fs.Parse(os.Args[1:])
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "warmup:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.spoold == "" || o.dir == "" || o.mode != "segments" && o.mode != "files" {
		return errors.New("need --spoold, --dir and --mode segments|files")
	}
	sim, stopSim, err := startFleet(o.targets)
	if err != nil {
		return err
	}
	defer stopSim()
	targets, profs, err := writeConfig(o.dir, sim)
	if err != nil {
		return err
	}
	last := time.Now().Add(-seedAge).Truncate(step)
	files, err := seed(filepath.Join(o.dir, "spool"), sim.Fleet(), o, last)
	if err != nil {
		return err
	}
	syscall.Sync() // the seeding's writeback is not the daemon's
	r, err := measure(o, targets, profs, last.Unix(), sim.Fleet())
	if err != nil {
		return err
	}
	fmt.Printf("warmup: files=%d walk_s=%s first_write_s=%s drained_s=%s graph_p99_ms=%.0f graph_failed=%d\n",
		files, secs(r.walk), secs(r.firstWrite), secs(r.drained), r.graphP99.Seconds()*1000, r.graphFailed)
	fmt.Fprintf(os.Stderr, "warmup: mode=%s graphs=%d graph_p50_ms=%.0f graph_max_ms=%.0f on_demand_leaves=%.0f\n",
		o.mode, r.graphs, r.graphP50.Seconds()*1000, r.graphMax.Seconds()*1000, r.onDemand)
	return nil
}

// secs formats a measured duration in seconds; -1 for never reached.
func secs(d time.Duration) string {
	if d < 0 {
		return "-1"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64)
}

func startFleet(n int) (*simulate.Simulator, func(), error) {
	so := simulate.DefaultOptions()
	so.Addr, so.Devices, so.Interfaces = "127.0.0.1:0", n, 1
	sim, err := simulate.Listen(so, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("start simulator: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = sim.Serve(ctx) }()
	return sim, func() { cancel(); sim.Close(); <-done }, nil
}

func writeConfig(dir string, sim *simulate.Simulator) (targets, profs string, err error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", "", fmt.Errorf("create work directory: %w", err)
	}
	var b strings.Builder
	if err := sim.Fleet().WriteTargets(&b, sim.Addr(), "warmup", "", -1); err != nil {
		return "", "", fmt.Errorf("write targets: %w", err)
	}
	targets, profs = filepath.Join(dir, "targets.conf"), filepath.Join(dir, "profiles.conf")
	if err := os.WriteFile(targets, []byte(b.String()), 0o640); err != nil {
		return "", "", fmt.Errorf("write targets: %w", err)
	}
	if err := os.WriteFile(profs, []byte(profiles), 0o640); err != nil {
		return "", "", fmt.Errorf("write profiles: %w", err)
	}
	return targets, profs, nil
}

// seed writes o.polls polls of every target, the last at last, with the
// simulator's values at their times, and returns the files in the spool.
func seed(dir string, fl *simulate.Fleet, o options, last time.Time) (int, error) {
	so := spool.DefaultOptions()
	so.Dir, so.SegmentMaxEntries = dir, max(o.polls, 1)
	sp, err := spool.Open(so)
	if err != nil {
		return 0, fmt.Errorf("seed spool: %w", err)
	}
	const workers = 2
	errs := make(chan error, workers)
	for w := range workers {
		go func() { errs <- seedShare(sp, fl, o, last, w, workers) }()
	}
	for range workers {
		if e := <-errs; e != nil && err == nil {
			err = e
		}
	}
	if cerr := sp.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("seed spool: %w", cerr)
	}
	if err != nil {
		return 0, err
	}
	return countFiles(dir, sp.Levels().Depth())
}

func seedShare(sp *spool.Spool, fl *simulate.Fleet, o options, last time.Time, w, workers int) error {
	for i := w; i < fl.Len(); i += workers {
		for k := range o.polls {
			at := last.Add(-time.Duration(o.polls-1-k) * step)
			e := spool.Entry{Key: fl.Name(i), Time: at.Unix(), Values: []spool.Value{
				{Name: "up", Type: spool.Gauge, Gauge: float64(fl.Value(i, oidUptime, at).Value.(uint32))},
				{Name: "in1", Type: spool.Counter, Counter: fl.Value(i, oidInOctets, at).Value.(uint64)},
			}}
			var err error
			if o.mode == "files" {
				_, err = sp.Write(&e)
			} else {
				_, _, err = sp.Append(&e)
			}
			if err != nil {
				return fmt.Errorf("seed spool: %w", err)
			}
		}
	}
	return nil
}

// countFiles counts the segment files in the level directories of dir.
func countFiles(dir string, levels int) (int, error) {
	pattern := dir
	for range levels {
		pattern = filepath.Join(pattern, "*")
	}
	dirs, err := filepath.Glob(pattern)
	if err != nil {
		return 0, fmt.Errorf("count spool files: %w", err)
	}
	n := 0
	for _, d := range dirs {
		names, err := os.ReadDir(d)
		if err != nil {
			return 0, fmt.Errorf("count spool files: %w", err)
		}
		for _, e := range names {
			if _, err := spool.ParseName(e.Name()); err == nil {
				n++
			}
		}
	}
	return n, nil
}

type result struct {
	walk, firstWrite, drained time.Duration
	graphP50, graphP99        time.Duration
	graphMax                  time.Duration
	graphs, graphFailed       int
	onDemand                  float64
	log                       string
}

// measure runs the daemon until the seeded backlog is drained (or
// o.maxWait), graphs every second during the walk, then stops it.
func measure(o options, targets, profs string, lastSeeded int64, fl *simulate.Fleet) (result, error) {
	r := result{walk: -1, firstWrite: -1, drained: -1, log: filepath.Join(o.dir, "spoold.log")}
	d, err := startDaemon(o, targets, profs, r.log)
	if err != nil {
		return r, err
	}
	defer d.stop()
	g := &grapher{base: d.admin, fl: fl, client: &http.Client{Timeout: time.Minute}}
	next := time.Now()
	for time.Since(d.started) < o.maxWait {
		m, err := d.metrics()
		if err != nil {
			return r, err
		}
		now := time.Since(d.started)
		if r.firstWrite < 0 && m["spoold_writer_update_calls_total"]-m["spoold_writer_priority_flushes_total"] > 0 {
			r.firstWrite = now
		}
		complete := m["spoold_warmup_complete"] == 1
		if complete && r.walk < 0 {
			r.walk, r.onDemand = now, m["spoold_warmup_leaves_on_demand_total"]
		}
		if !complete && time.Now().After(next) {
			g.request()
			next = next.Add(time.Second)
		}
		if complete && (m["spoold_index_entries"] == 0 || m["spoold_index_oldest_pending_time_seconds"] > float64(lastSeeded)) {
			r.drained = now
			break
		}
		time.Sleep(sample)
	}
	r.graphs, r.graphFailed, r.graphP50, r.graphP99, r.graphMax = g.wait()
	if r.graphs > 0 {
		fmt.Fprintf(os.Stderr, "warmup: slowest graph %s, %.1f s after the first request: %s\n",
			g.slowest.Round(time.Millisecond), g.slowestAt.Seconds(), g.slowestURL[strings.LastIndexByte(g.slowestURL, '/')+1:])
	}
	return r, nil
}

// daemon is spoold running as a child process.
type daemon struct {
	cmd     *exec.Cmd
	admin   string
	started time.Time
	exited  chan error
	logDone chan struct{}
}

var adminURL = regexp.MustCompile(`msg="admin server listening".* url=(\S+)`)

func startDaemon(o options, targets, profs, logPath string) (*daemon, error) {
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create daemon log: %w", err)
	}
	cmd := exec.Command(o.spoold,
		"--spool-dir", filepath.Join(o.dir, "spool"), "--rrd-dir", filepath.Join(o.dir, "rrd"),
		"--targets", targets, "--profiles", profs, "--admin-listen", "127.0.0.1:0",
		"--loader-files", "100", "--loader-sleep", "50ms", "--loader-threshold", "200ms",
		"--shutdown-timeout", "20s", "--log-level", "info")
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	d := &daemon{cmd: cmd, exited: make(chan error, 1), logDone: make(chan struct{})}
	url := make(chan string, 1)
	go func() {
		defer close(d.logDone)
		defer logFile.Close()
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			fmt.Fprintln(logFile, sc.Text())
			if m := adminURL.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case url <- strings.TrimSuffix(m[1], "/"):
				default:
				}
			}
		}
	}()
	d.started = time.Now()
	if err := cmd.Start(); err != nil {
		pw.Close()
		return nil, fmt.Errorf("start spoold: %w", err)
	}
	go func() { err := cmd.Wait(); pw.Close(); d.exited <- err }()
	select {
	case d.admin = <-url:
		return d, nil
	case err := <-d.exited:
		return nil, fmt.Errorf("spoold exited at start-up (%v); see %s", err, logPath)
	case <-time.After(time.Minute):
		d.stop()
		return nil, fmt.Errorf("spoold did not start its admin server; see %s", logPath)
	}
}

// stop ends the daemon with SIGTERM (its shutdown flush is bounded by
// --shutdown-timeout), SIGKILL if it does not exit.
func (d *daemon) stop() {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(time.Minute):
		_ = d.cmd.Process.Kill()
		<-d.exited
	}
	<-d.logDone
}

// metrics reads the unlabelled series of /metrics.
func (d *daemon) metrics() (map[string]float64, error) {
	resp, err := http.Get(d.admin + "/metrics")
	if err != nil {
		return nil, fmt.Errorf("get /metrics: %w", err)
	}
	defer resp.Body.Close()
	m := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.ContainsRune(name, '{') {
			continue
		}
		if v, err := strconv.ParseFloat(val, 64); err == nil {
			m[name] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read /metrics: %w", err)
	}
	return m, nil
}

// grapher requests graphs of random targets, each on its own goroutine,
// and keeps their latencies.
type grapher struct {
	base   string
	fl     *simulate.Fleet
	client *http.Client
	wg     sync.WaitGroup
	mu     sync.Mutex
	took   []time.Duration
	failed int
	// slowest is the slowest request: when it started (since the first)
	// and what it asked for, for the stderr summary.
	slowest      time.Duration
	slowestAt    time.Duration
	slowestURL   string
	firstRequest time.Time
}

func (g *grapher) request() {
	url := g.base + "/graph/" + g.fl.Name(rand.IntN(g.fl.Len())) + ".png"
	if g.firstRequest.IsZero() {
		g.firstRequest = time.Now()
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		start := time.Now()
		resp, err := g.client.Get(url)
		ok := err == nil && resp.StatusCode == http.StatusOK
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		took := time.Since(start)
		g.mu.Lock()
		defer g.mu.Unlock()
		g.took = append(g.took, took)
		if took > g.slowest {
			g.slowest, g.slowestAt, g.slowestURL = took, start.Sub(g.firstRequest), url
		}
		if !ok {
			g.failed++
			fmt.Fprintf(os.Stderr, "warmup: graph %s failed after %s: %v %v\n", url, took, err, status(resp))
		}
	}()
}

func status(resp *http.Response) string {
	if resp == nil {
		return ""
	}
	return resp.Status
}

// wait waits for the requests and returns their count, failures, median,
// 99th percentile (nearest rank) and maximum latency.
func (g *grapher) wait() (n, failed int, p50, p99, most time.Duration) {
	g.wg.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.took) == 0 {
		return 0, g.failed, 0, 0, 0
	}
	slices.Sort(g.took)
	rank := func(q float64) time.Duration { return g.took[int(math.Ceil(q*float64(len(g.took))))-1] }
	return len(g.took), g.failed, rank(0.5), rank(0.99), g.took[len(g.took)-1]
}
