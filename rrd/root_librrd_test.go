//go:build cgo

package rrd

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// TestRootConfinesEveryOpen creates and updates dir/a/x.rrd through a
// Root, then replaces the directory a with a symlink to a directory
// outside holding a file of the same name: every open through the Root
// (update, info, header, fetch, first, create, graph, open) is refused
// with ErrOutside, and the outside file's bytes are unchanged. A graph
// draws the file, and only it: a DEF naming another file is refused.
func TestRootConfinesEveryOpen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rrd")
	if err := os.Mkdir(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	path := filepath.Join(dir, "a", "x.rrd")
	if err := r.Create(path, testLayout(), t0); err != nil {
		t.Fatal(err)
	}
	tmpl := []string{"c", "g"}
	if err := r.Update(path, tmpl, []Sample{{Time: t0 + 300, Values: []string{"1", "2"}}}); err != nil {
		t.Fatal(err)
	}
	if fi, err := r.Info(path); err != nil || fi.Last != t0+300 {
		t.Fatalf("Info = %+v, %v; want last %d", fi, err, t0+300)
	}
	items, err := r.InfoItems(path)
	if err != nil || len(items) == 0 || items[0].Key != "filename" || items[0].Str != path {
		t.Fatalf("InfoItems = %.1v, %v; want first the filename %s, not the descriptor's name", items, err, path)
	}
	graphOf := func(file string) GraphCall {
		return GraphCall{Start: time.Unix(t0, 0), End: time.Unix(t0+600, 0), Width: 100, Height: 50,
			Args: []string{"DEF:v=" + EscapeColons(path) + ":g:AVERAGE", "DEF:w=" + EscapeColons(file) + ":g:AVERAGE", "LINE1:v#000000"}}
	}
	if img, err := r.Graph(path, graphOf(path)); err != nil || !bytes.HasPrefix(img, []byte("\x89PNG")) {
		t.Fatalf("Graph = %.8q, %v; want a PNG", img, err)
	}
	if _, err := r.Graph(path, graphOf("/etc/passwd")); err == nil || !strings.Contains(err.Error(), "draws another file") {
		t.Errorf("Graph with a DEF of /etc/passwd = %v, want refused", err)
	}

	outside := testenv.SwapForSymlink(t, filepath.Join(dir, "a"))
	outFile := filepath.Join(outside, "x.rrd")
	before, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	end := time.Unix(t0+600, 0)
	checks := map[string]error{
		"update":               r.Update(path, tmpl, []Sample{{Time: t0 + 600, Values: []string{"3", "4"}}}),
		"create":               r.Create(filepath.Join(dir, "a", "y.rrd"), testLayout(), t0),
		"create from":          r.CreateFrom(filepath.Join(dir, "a", "z.rrd"), 300, t0, nil, "", []string{"DS:g:GAUGE:600:U:U", "RRA:AVERAGE:0.5:1:10"}, false),
		"create from template": r.CreateFrom(filepath.Join(dir, "w.rrd"), 300, t0, nil, path, nil, false),
	}
	_, checks["info"] = r.Info(path)
	_, checks["header"] = r.ReadHeader(path)
	_, checks["rras"] = r.ReadRRAs(path)
	_, checks["info items"] = r.InfoItems(path)
	_, checks["fetch"] = r.Fetch(path, "AVERAGE", end.Add(-time.Hour), end, time.Second)
	_, checks["first"] = r.First(path, 0)
	_, checks["graph"] = r.Graph(path, graphOf(path))
	_, checks["open"] = r.Open(path, os.O_RDONLY)
	_, checks["open header"] = r.OpenHeader(path)
	_, checks["open noatime"] = r.OpenNoAtime(path)
	checks["probe"] = r.ProbeCreate(path)
	for name, err := range checks {
		if !errors.Is(err, ErrOutside) {
			t.Errorf("%s through the swapped symlink: err = %v, want ErrOutside", name, err)
		}
	}
	after, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("the file outside the RRD directory was written")
	}
	for _, n := range []string{"y.rrd", "z.rrd"} {
		if _, err := os.Stat(filepath.Join(outside, n)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s created outside the RRD directory: %v", n, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "w.rrd")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("w.rrd created from an outside template: %v", err)
	}
}

// TestRootPathsOutsideRefused refuses paths not beneath the directory by
// name.
func TestRootPathsOutsideRefused(t *testing.T) {
	dir := t.TempDir()
	r, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, p := range []string{dir, filepath.Join(dir, "..", "x.rrd"), "/etc/passwd", dir + "x/y.rrd"} {
		if _, err := r.Info(p); !errors.Is(err, ErrOutside) {
			t.Errorf("Info(%q) = %v, want ErrOutside", p, err)
		}
	}
	if _, err := r.Info(filepath.Join(dir, "missing.rrd")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Info of a missing file = %v, want fs.ErrNotExist", err)
	}
}
