//go:build cgo

package admin

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/graph"
	"github.com/spoold/spoold/internal/testing/spoolgen"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

// writerDaemon graphs through a real rrdwriter.Writer over librrd.
type writerDaemon struct {
	*fakeDaemon
	w *rrdwriter.Writer
}

func (b writerDaemon) Graph(ctx context.Context, target string, o graph.Options) ([]byte, error) {
	if _, err := b.fakeDaemon.Graph(ctx, target, o); err != nil {
		return nil, err // unknown target
	}
	return b.w.Graph(ctx, target, o.Draw)
}

// newWriterDaemon returns a daemon with targets "core-1", which has an
// RRD file with data sources in and out, and "fresh", which has none, and
// the spool and RRD directories.
func newWriterDaemon(t *testing.T) (writerDaemon, string, string) {
	spoolDir := filepath.Join(t.TempDir(), "spool")
	sp := spoolgen.OpenTest(t, spoolDir)
	ix, err := shm.New(shm.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	wo := rrdwriter.DefaultOptions()
	wo.Dir, wo.Native = filepath.Join(t.TempDir(), "rrd"), false // librrd on the writer's own root
	wo.Layout = func(string) (rrd.Layout, bool) {
		return rrd.Layout{Step: 300 * time.Second, RRAs: rrd.DefaultRRAs(300 * time.Second), DS: []rrd.DataSource{
			{Name: "in", Type: rrd.Gauge, Heartbeat: 600 * time.Second, Min: math.NaN(), Max: math.NaN()},
			{Name: "out", Type: rrd.Gauge, Heartbeat: 600 * time.Second, Min: math.NaN(), Max: math.NaN()},
		}}, true
	}
	w, err := rrdwriter.New(sp, ix, wo)
	if err != nil {
		t.Fatal(err)
	}
	e := spool.Entry{Key: "core-1", Time: testNow.Add(-10 * time.Minute).Unix(), Values: []spool.Value{
		{Name: "in", Type: spool.Gauge, Gauge: 1}, {Name: "out", Type: spool.Gauge, Gauge: 2}}}
	ref, err := sp.Write(&e)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Add(ref.Hash, e.Key, e.Time); err != nil {
		t.Fatal(err)
	}
	if err := w.FlushKey(context.Background(), "core-1"); err != nil {
		t.Fatal(err)
	}
	return writerDaemon{newFakeDaemon(okTarget("core-1"), okTarget("fresh")), w}, spoolDir, wo.Dir
}

func TestGraphErrorsNameNoPaths(t *testing.T) {
	b, spoolDir, rrdDir := newWriterDaemon(t)
	var logs bytes.Buffer
	o := testOptions()
	o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := NewHandler(b, o)
	for _, c := range []struct {
		url  string
		code int
		want string
	}{
		{"/graph/core-1.png?ds=nosuch", 400, `"nosuch"`},
		{"/graph/core-1.png?ds=in,nosuch", 400, `"nosuch"`},
		{"/graph/fresh.png", 404, `"fresh"`},
		{"/graph/fresh.png?ds=in", 404, `"fresh"`},
		{"/graph/core-1.png?ds=in,out", 200, "\x89PNG"},
	} {
		t.Run(c.url, func(t *testing.T) {
			resp := do(t, h, "GET", c.url, "")
			body := readBody(t, resp)
			if resp.StatusCode != c.code || !strings.Contains(body, c.want) {
				t.Errorf("status %d, body %q; want %d containing %q", resp.StatusCode, body, c.code, c.want)
			}
			for _, dir := range []string{spoolDir, rrdDir, filepath.Dir(rrdDir)} {
				if strings.Contains(body, dir) {
					t.Errorf("body names the directory %s: %q", dir, body)
				}
			}
		})
	}
	if strings.Contains(logs.String(), "level=ERROR") {
		t.Errorf("a client's mistake was logged at ERROR:\n%s", logs.String())
	}
}
