//go:build cgo

package rrdwriter

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoold/spoold/graph"
	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/rrd"
)

// TestLibRRDStaysInsideTheRRDDir: a poller target's directory replaced by
// a symlink to a directory outside the RRD directory after its file was
// made. The next write is refused (kind path, the entry kept, the outside
// file unchanged), no file is created out there, and a graph of the file
// is refused at the open librrd's graph would make. The same with the
// native update path.
func TestLibRRDStaysInsideTheRRDDir(t *testing.T) {
	for name, r := range map[string]func(*rrd.Root) RRD{"librrd": LibRRD, "native": func(r *rrd.Root) RRD { return NewNativeRRD(r, 16) }} {
		t.Run(name, func(t *testing.T) { testStaysInsideTheRRDDir(t, r) })
	}
}

func testStaysInsideTheRRDDir(t *testing.T, r func(*rrd.Root) RRD) {
	testenv.NeedRRDTool(t)
	e := newEnvOf(t, r, nil)
	ctx := context.Background()
	e.putCG("sw1/ge-1", t0, 1, 1)
	if err := e.w.FlushAll(ctx); err != nil {
		t.Fatal(err)
	}
	outside := testenv.SwapForSymlink(t, filepath.Join(e.dir, "sw1"))
	outFile := filepath.Join(outside, "ge-1.rrd")
	before, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	ref := e.putCG("sw1/ge-1", t0+300, 2, 2)
	newRef := e.putCG("sw1/ge-2", t0+300, 2, 2)
	if err := e.w.FlushAll(ctx); err == nil {
		t.Error("FlushAll through the swapped symlink succeeded")
	}
	if after, _ := os.ReadFile(outFile); !bytes.Equal(before, after) {
		t.Error("the file outside the RRD directory was written")
	}
	if _, err := os.Stat(filepath.Join(outside, "ge-2.rrd")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was created outside the RRD directory: %v", err)
	}
	if !e.exists(ref) || !e.exists(newRef) {
		t.Error("a refused entry left the spool")
	}
	if n := e.w.Stats().Errors[KindPath]; n < 2 {
		t.Errorf("errors of kind path = %d, want both targets' refusals", n)
	}
	for _, te := range e.w.TargetErrors() {
		if te.Kind != KindPath || !strings.Contains(te.Err, te.Path) || !strings.Contains(te.Err, "leads out of the RRD directory") {
			t.Errorf("target error %+v: want kind path, naming the file and why", te)
		}
	}
	if _, err := e.w.Graph(context.Background(), "sw1/ge-1", graph.Options{}.Draw); !errors.Is(err, rrd.ErrOutside) {
		t.Errorf("Graph through the swapped symlink = %v, want rrd.ErrOutside", err)
	}
}

// TestRRDOfAnotherDirIsRefused: a local RRD opens its files beneath the
// directory of its Root; one whose Root is not Options.Dir would refuse
// every file of the writer's, so New refuses it, naming both.
func TestRRDOfAnotherDirIsRefused(t *testing.T) {
	other := t.TempDir()
	o := DefaultOptions()
	o.Dir, o.RRD = filepath.Join(t.TempDir(), "rrd"), LibRRD(testRoot(t, other))
	_, err := New(nil, nil, o)
	if err == nil || !strings.Contains(err.Error(), other) || !strings.Contains(err.Error(), o.Dir) {
		t.Errorf("New with an RRD beneath %s for Dir %s: %v, want refused naming both", other, o.Dir, err)
	}
}
