package admin

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoold/spoold/graph"
	"github.com/spoold/spoold/loader"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testNow is the fake clock of every test.
var testNow = time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)

type graphCall struct {
	target string
	o      graph.Options
}

// fakeDaemon is a Daemon with a fixed status; Graph draws a real PNG of
// the requested size for configured targets.
type fakeDaemon struct {
	mu       sync.Mutex
	status   Status
	params   loader.Params
	graphs   []graphCall
	flushes  int
	flushErr error
	setErr   error
	rows     map[string][]RowStatus // by target
}

func newFakeDaemon(targets ...TargetStatus) *fakeDaemon {
	return &fakeDaemon{status: sampleStatus(targets...), params: loader.DefaultParams()}
}

func (f *fakeDaemon) Status() Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.status
	s.Loader.Params = f.params
	return s
}

func (f *fakeDaemon) Graph(ctx context.Context, target string, o graph.Options) ([]byte, error) {
	f.mu.Lock()
	f.graphs = append(f.graphs, graphCall{target, o})
	f.mu.Unlock()
	if _, err := f.graphsOf(target); err != nil {
		return nil, err
	}
	return drawPNG(o.Width+80, o.Height+40), nil
}

// graphsOf returns the templates of key, a target or one of its rows.
func (f *fakeDaemon) graphsOf(key string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	target, _, row := strings.Cut(key, "/")
	for _, t := range f.status.Targets {
		if t.Name != target {
			continue
		}
		if !row {
			return t.Graphs, nil
		}
		for _, r := range f.rows[target] {
			if r.Key == key {
				return r.Graphs, nil
			}
		}
	}
	return nil, ErrUnknownTarget
}

func (f *fakeDaemon) GraphTemplate(key, name string) (*graph.Template, graph.Vars, error) {
	names, err := f.graphsOf(key)
	if err != nil {
		return nil, graph.Vars{}, err
	}
	t, ok := graph.Builtin(name)
	if !ok || !slices.Contains(names, name) {
		return nil, graph.Vars{}, ErrUnknownTemplate
	}
	target, _, _ := strings.Cut(key, "/")
	return t, graph.Vars{Target: target, Instance: key[strings.LastIndexByte(key, '/')+1:], Key: key}, nil
}

func (f *fakeDaemon) Rows(target string) ([]RowStatus, error) {
	if _, err := f.graphsOf(target); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rows[target], nil
}

func (f *fakeDaemon) FlushAll(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flushes++
	return f.flushErr
}

func (f *fakeDaemon) Orphans() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return rrdwriter.Orphans(f.status.WriterErrors)
}

func (f *fakeDaemon) SetLoaderParams(p loader.Params) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.setErr != nil {
		return f.setErr
	}
	if err := p.Validate(); err != nil {
		return err
	}
	f.params = p
	return nil
}

func (f *fakeDaemon) graphCalls() []graphCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]graphCall(nil), f.graphs...)
}

// drawPNG encodes a w×h picture that looks a little like an RRD graph.
func drawPNG(w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.RGBA{0xf8, 0xf8, 0xf8, 0xff}
			if x%50 == 0 || y%40 == 0 {
				c = color.RGBA{0xdd, 0xdd, 0xdd, 0xff}
			}
			if wave := h/2 + int(float64(h/3)*math.Sin(float64(x)/37)); y >= wave {
				c = color.RGBA{0x40, 0xa0, 0x40, 0xff}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// sampleStatus is a daemon in mid-flight: the loader half-way, a cycle done,
// one write error.
func sampleStatus(targets ...TargetStatus) Status {
	cycle := poller.CycleStats{Seq: 42, Start: testNow.Add(-70 * time.Second), Duration: 12 * time.Second,
		Devices: len(targets), OK: len(targets) - 1, Failed: 1, Timeouts: 1, Values: 120, Unknown: 2, WrongTypes: 1}
	var werrs []rrdwriter.TargetError
	for _, t := range targets {
		if t.WriteError != "" {
			werrs = append(werrs, rrdwriter.TargetError{Key: t.Name, Path: "/var/lib/spoold/rrd/" + t.Name + ".rrd",
				Kind: rrdwriter.KindPermission, Err: t.WriteError, At: testNow.Add(-time.Minute), Failures: 3,
				RetryAt: testNow.Add(time.Minute)})
		}
	}
	w := rrdwriter.Stats{QueueLength: 7, EntriesPending: 19, InFlight: 2, BackingOff: 1, TargetsFailing: 1,
		OldestPendingAge: 9 * time.Minute, UpdateCalls: 1234, EntriesWritten: 2000, ValuesWritten: 64000}
	w.Errors[rrdwriter.KindPermission] = 3
	w.Errors[rrdwriter.KindValue] = 1
	return Status{
		Version: "1.2.3-test", Started: testNow.Add(-26 * time.Hour),
		Settings: map[string]string{"admin-listen": "127.0.0.1:8780", "loader-files": "100", "spool-dir": "/var/spool/spoold"},
		Spool:    spool.Stats{Written: 5000, WrittenBytes: 1 << 20, Removed: 4900},
		Index: shm.Stats{Shards: 64, Keys: 7, Entries: 19, InFlight: 2, Bytes: 3 << 20, MaxBytes: 10 << 20,
			Added: 5000, Applied: 4981, OldestPending: testNow.Add(-9 * time.Minute)},
		Loader: loader.Stats{Running: true, Started: testNow.Add(-5 * time.Minute), LeafDirs: 2048,
			Progress: 0.5, Files: 300000, Indexed: 299000, Existing: 1000, Rate: 1000, ETA: 5 * time.Minute,
			Iterations: 3000, Sleeps: 3000, Slept: 150 * time.Second, CPU: 20 * time.Second, IterationFiles: 100},
		LoaderNextRescan: testNow.Add(time.Hour),
		Writer:           w,
		WriterErrors:     werrs,
		LastCycle:        &cycle,
		PollInterval:     5 * time.Minute,
		Targets:          targets,
		Disk:             sampleDisk(),
	}
}

func okTarget(name string) TargetStatus {
	return NewTargetStatus(poller.DeviceStatus{Name: name, Address: "192.0.2.1:161", Profile: "if-mib-4",
		LastPoll: testNow.Add(-time.Minute), LastSuccess: testNow.Add(-time.Minute), RTT: 35 * time.Millisecond,
		Polls: 300}, nil)
}

func testOptions() Options {
	o := DefaultOptions()
	o.Now = func() time.Time { return testNow }
	o.Refresh = time.Hour
	return o
}

// do runs one request against h and returns the response.
func do(t *testing.T, h http.Handler, method, target string, body string, header ...string) *http.Response {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var errBoom = errors.New("boom")
