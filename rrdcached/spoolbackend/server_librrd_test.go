//go:build cgo

package spoolbackend

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/rrdcached"
)

// serveProto serves the backend b over the protocol on a unix socket
// with opts (its Dir and Listeners set here) until the test ends.
func serveProto(t *testing.T, e *env, b *Backend, opts rrdcached.Options) (sock string, reg *prometheus.Registry) {
	opts.Dir = e.dir
	sock = filepath.Join(t.TempDir(), "sock")
	opts.Listeners = []rrdcached.ListenerOptions{{Spec: "unix:" + sock}}
	reg = prometheus.NewPedanticRegistry()
	srv, err := rrdcached.New(opts, b, nil, reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return sock, reg
}

// wideRRD creates file with ds GAUGE data sources and one AVERAGE
// archive of rows rows of 300 s ending at t0.
func (e *env) wideRRD(file string, ds, rows int) {
	defs := make([]string, 0, ds+1)
	for i := range ds {
		defs = append(defs, fmt.Sprintf("DS:g%d:GAUGE:600:U:U", i))
	}
	e.mkRRD(file, append(defs, fmt.Sprintf("RRA:AVERAGE:0.5:1:%d", rows))...)
}

// fetchAll sends line from n clients at once and returns each one's
// status line, reading the rest of each reply without keeping it.
func fetchAll(t *testing.T, sock, line string, n int) []string {
	var wg sync.WaitGroup
	status := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status[i] = fetchOnce(sock, line)
		}()
	}
	wg.Wait()
	return status
}

func fetchOnce(sock, line string) string {
	c, err := net.Dial("unix", sock)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	fmt.Fprintf(c, "%s\n", line)
	r := bufio.NewReader(c)
	first, err := r.ReadString('\n')
	if err != nil {
		return err.Error()
	}
	first = strings.TrimSuffix(first, "\n")
	num, msg, _ := strings.Cut(first, " ")
	n, _ := strconv.Atoi(num)
	for i := 0; i < n; i++ {
		for {
			_, err := r.ReadSlice('\n')
			if err == nil {
				break
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				return fmt.Sprintf("%s: line %d of %d: %v", first, i+1, n, err)
			}
		}
	}
	if n > 6 {
		return "rows " + msg
	}
	return first
}

// TestProtocolFetchBounded: FETCH over the protocol server with this
// backend. Six clients fetching 50 data sources × 20,000 rows (8 MB of
// values each) at once are answered, and the process's peak resident
// memory grows by less than MaxFetches of them at once (each holds
// librrd's values and spoold's copy; the reply is written as it is
// formatted, never built whole). Six fetching a file of 350 data sources
// × 20,000 rows are refused, saying why, before librrd reads a row.
func TestProtocolFetchBounded(t *testing.T) {
	testenv.ResetPeakRSS(t)
	const clients, rows = 6, 20000
	e, b := newProtoEnv(t)
	e.wideRRD("big.rrd", 350, rows)
	e.wideRRD("mid.rrd", 50, rows)
	opts := rrdcached.DefaultOptions()
	sock, reg := serveProto(t, e, b, opts)
	span := fmt.Sprintf("%d %d", t0-rows*300, t0)

	testenv.ResetPeakRSS(t)
	before := testenv.PeakRSS(t)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	allocated := ms.TotalAlloc
	for i, got := range fetchAll(t, sock, "FETCH mid.rrd AVERAGE "+span, clients) {
		if want := "rows Success"; got != want {
			t.Errorf("client %d: FETCH of 50 × %d: %q, want %q", i, rows, got, want)
		}
	}
	grew := testenv.PeakRSS(t) - before
	runtime.ReadMemStats(&ms)
	values := int64(50 * rows * 8)
	// Each fetch allocates spoold's copy of the values and little else:
	// the reply's text is formatted into one reused row.
	perFetch := int64(ms.TotalAlloc-allocated) / clients
	t.Logf("%.1f MiB allocated per fetch of %.1f MiB of values", float64(perFetch)/(1<<20), float64(values)/(1<<20))
	if perFetch > 2*values {
		t.Errorf("a FETCH of %.1f MiB of values allocated %.1f MiB: its reply is built, not streamed", float64(values)/(1<<20), float64(perFetch)/(1<<20))
	}
	// librrd's values, spoold's copy, and the collector's slack (GOGC).
	bound := int64(opts.MaxFetches)*3*values + 24<<20
	t.Logf("peak RSS grew %.1f MiB for %d concurrent fetches of %.1f MiB of values (bound %.1f MiB)",
		float64(grew)/(1<<20), clients, float64(values)/(1<<20), float64(bound)/(1<<20))
	if testenv.Race {
		t.Log("the race detector's shadow memory is in the resident size: its bound is checked without -race")
	} else if grew > bound {
		t.Errorf("%d concurrent FETCHes of %.1f MiB of values grew the peak RSS by %.1f MiB, want at most %.1f MiB",
			clients, float64(values)/(1<<20), float64(grew)/(1<<20), float64(bound)/(1<<20))
	}

	testenv.ResetPeakRSS(t)
	before = testenv.PeakRSS(t)
	want := fmt.Sprintf("-1 FETCH too large: %d rows of 350 data sources (53.4 MiB of values) over this range, more than the 32.0 MiB one FETCH may read; ask for a shorter range", rows+2)
	for i, got := range fetchAll(t, sock, "FETCH big.rrd AVERAGE "+span, clients) {
		if got != want {
			t.Errorf("client %d: FETCH of 350 × %d: %q, want %q", i, rows, got, want)
		}
	}
	if grew := testenv.PeakRSS(t) - before; grew > 24<<20 && !testenv.Race {
		t.Errorf("%d refused FETCHes grew the peak RSS by %.1f MiB", clients, float64(grew)/(1<<20))
	}
	if refused := refusals(t, reg, rrdcached.RefuseFetchTooLarge); refused != clients {
		t.Errorf("%s refusals %v, want %d", rrdcached.RefuseFetchTooLarge, refused, clients)
	}
}

// refusals sums spoold_rrdcached_refusals_total of reason.
func refusals(t *testing.T, reg *prometheus.Registry, reason string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "spoold_rrdcached_refusals_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "reason" && lp.GetValue() == reason {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

// TestProtocolCreateOnFullDisk: a CREATE into a full file system says
// what failed, where librrd gives no reason (rrdcached answers
// "-1 RRD Error: " and nothing after it).
func TestProtocolCreateOnFullDisk(t *testing.T) {
	e, b := newProtoEnv(t)
	full := filepath.Join(e.dir, "full")
	testenv.MountTmpfs(t, full, "64k")
	testenv.FillDisk(t, full)
	sock, _ := serveProto(t, e, b, rrdcached.DefaultOptions())
	got := fetchOnce(sock, "CREATE full/x.rrd -s 10 DS:x:GAUGE:20:U:U RRA:AVERAGE:0.5:1:100")
	want := fmt.Sprintf("-1 RRD Error: creating '%s': No space left on device", filepath.Join(full, "x.rrd"))
	if !strings.HasPrefix(got, want) {
		t.Errorf("CREATE on a full disk: %q, want %q...", got, want)
	}
	t.Logf("CREATE on a full disk: %s", got)
	if _, err := os.Stat(filepath.Join(full, "x.rrd")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file after the failed CREATE: %v", err)
	}
}
