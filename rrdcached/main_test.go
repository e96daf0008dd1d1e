package rrdcached_test

import (
	"bufio"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/spoold/spoold/internal/testing/rrdctest"
	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/rrdcached"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testServer is a Server on a fixture directory with a memBackend.
type testServer struct {
	*rrdcached.Server
	dir     string
	backend *memBackend
	reg     *prometheus.Registry
}

// startServer starts a server on a new fixture directory; edit changes
// the options (the listeners are unix:<dir>/../sock unless it sets them).
func startServer(t testing.TB, edit func(*rrdcached.Options)) *testServer {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "rrd")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rrdctest.Prepare(t, dir)
	opts := rrdcached.DefaultOptions()
	opts.Dir = dir
	opts.Listeners = []rrdcached.ListenerOptions{{Spec: "unix:" + filepath.Join(base, "sock")}}
	if edit != nil {
		edit(&opts)
	}
	b := newMemBackend(dir)
	reg := prometheus.NewPedanticRegistry()
	var h slog.Handler = slog.NewTextHandler(testWriter{t}, nil)
	if _, fuzz := t.(*testing.F); fuzz {
		h = slog.DiscardHandler // a fuzz target may not log through f
	}
	s, err := rrdcached.New(opts, b, slog.New(h), reg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close server: %v", err)
		}
	})
	return &testServer{Server: s, dir: s.Dir(), backend: b, reg: reg}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// client is one connection to a test server.
type client struct {
	t *testing.T
	net.Conn
	r *bufio.Reader
}

func (s *testServer) dial(t *testing.T, i int) *client {
	t.Helper()
	a := s.Addrs()[i]
	c, err := net.Dial(a.Network(), a.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{t: t, Conn: c, r: bufio.NewReader(c)}
}

// do sends lines and reads one reply.
func (c *client) do(lines ...string) rrdcached.Reply {
	c.t.Helper()
	c.send(lines...)
	return c.reply()
}

func (c *client) send(lines ...string) {
	c.t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(strings.Join(lines, "\n") + "\n")); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) reply() rrdcached.Reply {
	c.t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	rep, err := rrdcached.ReadReply(c.r)
	if err != nil {
		c.t.Fatalf("read reply: %v", err)
	}
	return rep
}

// closed reports whether the server closed the connection (within 10 s).
func (c *client) closed() bool {
	c.SetDeadline(time.Now().Add(10 * time.Second))
	_, err := c.r.ReadByte()
	return err != nil && !os.IsTimeout(err)
}

// metric returns the value of the counter or gauge name with the labels
// given (name=value pairs), 0 if absent.
func (s *testServer) metric(t *testing.T, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := s.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, labels) {
				switch {
				case m.Counter != nil:
					return m.Counter.GetValue()
				case m.Gauge != nil:
					return m.Gauge.GetValue()
				case m.Histogram != nil:
					return float64(m.Histogram.GetSampleCount())
				}
			}
		}
	}
	return 0
}

func hasLabels(m *dto.Metric, labels []string) bool {
	for i := 0; i+1 < len(labels); i += 2 {
		found := false
		for _, lp := range m.GetLabel() {
			if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// waitFor polls cond until it holds or 10 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.WaitFor(t, what, 10*time.Second, cond)
}

// waitLong polls cond until it holds or a minute passes (the server works
// through megabytes of lines meanwhile).
func waitLong(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.WaitFor(t, what, time.Minute, cond)
}
