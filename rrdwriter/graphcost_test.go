package rrdwriter

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/spool"
)

// recordingRRD records the data sources each Graph call draws.
type recordingRRD struct {
	RRD
	mu    sync.Mutex
	drawn [][]string
}

func (r *recordingRRD) Graph(path string, ds []string, g GraphOptions) ([]byte, error) {
	r.mu.Lock()
	r.drawn = append(r.drawn, slices.Clone(ds))
	r.mu.Unlock()
	return r.RRD.Graph(path, ds, g)
}

// wideProfile has n GAUGE data sources g0, g1, ... and the default archives.
func wideProfile(n int, step time.Duration, rras ...string) rrd.Layout {
	p := rrd.Layout{Step: step, RRAs: rras}
	if len(rras) == 0 {
		p.RRAs = rrd.DefaultRRAs(step)
	}
	for i := range n {
		p.DS = append(p.DS, rrd.DataSource{Name: fmt.Sprintf("g%d", i), Type: rrd.Gauge, Heartbeat: 2 * step, Min: nanF(), Max: nanF()})
	}
	return p
}

// putWide writes and flushes one entry of key with every data source of p.
func (e *env) putWide(key string, ts int64, p rrd.Layout) {
	e.t.Helper()
	var vals []spool.Value
	for _, ds := range p.DS {
		vals = append(vals, gauge(ds.Name, 1))
	}
	e.put(key, ts, 0, vals...)
	if err := e.w.FlushKey(context.Background(), key); err != nil {
		e.t.Fatal(err)
	}
}

func TestGraphDefaultDrawsFirstDataSources(t *testing.T) {
	p := wideProfile(40, 300*time.Second)
	rec := &recordingRRD{RRD: newFake()}
	e := newEnv(t, rec, func(o *Options) { o.Layout = func(string) (rrd.Layout, bool) { return p, true } })
	e.putWide("wide", t0, p)
	if _, err := e.w.Graph(context.Background(), "wide", GraphOptions{}); err != nil {
		t.Fatal(err)
	}
	want := e.w.target(spool.KeyHash("wide"), "wide").template()[:DefaultGraphMaxDS]
	if len(rec.drawn) != 1 || !slices.Equal(rec.drawn[0], want) {
		t.Fatalf("a graph without ds drew %v, want the first %d: %v", rec.drawn, DefaultGraphMaxDS, want)
	}
}

func TestGraphRefusesBeyondCost(t *testing.T) {
	// One data source stepped every second over 20 years: 631 million rows,
	// 5 GB in librrd before the bound.
	p := wideProfile(1, time.Second, "RRA:AVERAGE:0.5:1:4000")
	rec := &recordingRRD{RRD: newFake()}
	e := newEnv(t, rec, func(o *Options) { o.Layout = func(string) (rrd.Layout, bool) { return p, true } })
	e.putWide("fine", t0, p)
	end := time.Unix(t0, 0)
	for _, ds := range [][]string{nil, {"g0"}} {
		_, err := e.w.Graph(context.Background(), "fine", GraphOptions{DS: ds, Start: end.Add(-20 * 366 * 24 * time.Hour), End: end})
		if !errors.Is(err, ErrGraphTooLarge) || strings.Contains(err.Error(), e.dir) {
			t.Errorf("ds %v over 20 years: err = %v, want ErrGraphTooLarge naming no path", ds, err)
		}
	}
	if len(rec.drawn) != 0 {
		t.Errorf("librrd was asked to draw %v", rec.drawn)
	}
	// The last hour of the same file is cheap.
	if _, err := e.w.Graph(context.Background(), "fine", GraphOptions{Start: end.Add(-time.Hour), End: end}); err != nil {
		t.Errorf("last hour: %v", err)
	}
}

func TestGraphErrorsForClients(t *testing.T) {
	e := newEnv(t, newFake(), nil)
	e.putCG("r", t0, 1, 1)
	if err := e.w.FlushKey(context.Background(), "r"); err != nil {
		t.Fatal(err)
	}
	_, err := e.w.Graph(context.Background(), "r", GraphOptions{DS: []string{"g", "nosuch"}})
	if !errors.Is(err, ErrNoDataSource) || !strings.Contains(err.Error(), `"nosuch"`) || strings.Contains(err.Error(), e.dir) {
		t.Errorf("unknown ds: %v; want ErrNoDataSource naming nosuch and no path", err)
	}
	_, err = e.w.Graph(context.Background(), "r", GraphOptions{DS: []string{"c", "g", "c"}, MaxDS: 2})
	if !errors.Is(err, ErrGraphTooLarge) {
		t.Errorf("3 ds with MaxDS 2: %v; want ErrGraphTooLarge", err)
	}
	if _, err = e.w.Graph(context.Background(), "never-written", GraphOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no file: %v; want fs.ErrNotExist", err)
	}
}
