package graph

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/rrd"
)

func TestGraphDefaultDrawsFirstDataSources(t *testing.T) {
	l := wideLayout(40, 300*time.Second)
	fi := infoOf(l, t0)
	rec := &recorder{}
	if _, err := (Options{}).draw(nil, filepath.Join(t.TempDir(), "wide.rrd"), fi, rec.graph); err != nil {
		t.Fatal(err)
	}
	want := dsNames(fi)[:DefaultMaxDS]
	if len(rec.drawn) != 1 || !slices.Equal(rec.drawn[0], want) {
		t.Fatalf("a graph without ds drew %v, want the first %d: %v", rec.drawn, DefaultMaxDS, want)
	}
}

func TestGraphRefusesBeyondCost(t *testing.T) {
	// One data source stepped every second over 20 years: 631 million rows,
	// 5 GB in librrd before the bound.
	l := wideLayout(1, time.Second, "RRA:AVERAGE:0.5:1:4000")
	fi := infoOf(l, t0)
	dir := t.TempDir()
	path := filepath.Join(dir, "fine.rrd")
	rec := &recorder{}
	end := time.Unix(t0, 0)
	for _, ds := range [][]string{nil, {"g0"}} {
		_, err := Options{DS: ds, Start: end.Add(-20 * 366 * 24 * time.Hour), End: end}.draw(rootOf(t, path), path, fi, rec.graph)
		if !errors.Is(err, ErrTooLarge) || strings.Contains(err.Error(), dir) {
			t.Errorf("ds %v over 20 years: err = %v, want ErrTooLarge naming no path", ds, err)
		}
	}
	if len(rec.drawn) != 0 {
		t.Errorf("librrd was asked to draw %v", rec.drawn)
	}
	// The last hour of the same file is cheap.
	if _, err := (Options{Start: end.Add(-time.Hour), End: end}).draw(rootOf(t, path), path, fi, rec.graph); err != nil {
		t.Errorf("last hour: %v", err)
	}
}

func TestGraphErrorsForClients(t *testing.T) {
	fi := rrd.FileInfo{Last: t0, Step: 300 * time.Second, DS: []rrd.DSInfo{{Name: "c", Type: rrd.Counter}, {Name: "g", Type: rrd.Gauge}}}
	dir := t.TempDir()
	path := filepath.Join(dir, "r.rrd")
	rec := &recorder{}
	_, err := Options{DS: []string{"g", "nosuch"}}.draw(rootOf(t, path), path, fi, rec.graph)
	if !errors.Is(err, ErrNoDataSource) || !strings.Contains(err.Error(), `"nosuch"`) || strings.Contains(err.Error(), dir) {
		t.Errorf("unknown ds: %v; want ErrNoDataSource naming nosuch and no path", err)
	}
	_, err = Options{DS: []string{"c", "g", "c"}, MaxDS: 2}.draw(rootOf(t, path), path, fi, rec.graph)
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("3 ds with MaxDS 2: %v; want ErrTooLarge", err)
	}
}
