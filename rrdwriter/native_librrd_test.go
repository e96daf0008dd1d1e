//go:build cgo

package rrdwriter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/rrd"
)

// TestNativeRRDWritesLibrrdBytes: NativeRRD's updates leave the bytes
// librrd's leave, refuse a past time with librrd's words, and send a file
// the native path does not handle to librrd, counted by reason.
func TestNativeRRDWritesLibrrdBytes(t *testing.T) {
	testenv.NeedRRDTool(t)
	dir := t.TempDir()
	lib, nat := filepath.Join(dir, "lib.rrd"), filepath.Join(dir, "nat.rrd")
	root := testRoot(t, dir)
	if err := LibRRD(root).Create(lib, testLayout(), t0); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(lib)
	os.WriteFile(nat, b, 0o644)
	n := NewNativeRRD(root, 8)
	defer n.Close()
	template := []string{"g", "c"}
	batches := [][]rrd.Sample{
		{{Time: t0 + 300, Values: []string{"1.5", "100"}}, {Time: t0 + 450, Milli: 250, Values: []string{"U", "200"}}},
		{{Time: t0 + 1200, Values: []string{"3", "4294967000"}}, {Time: t0 + 1500, Values: []string{"4", "12"}}},
		{{Time: t0 + 1800, Values: []string{"5", "20"}}, {Time: t0 + 1800, Values: []string{"6", "30"}}},
	}
	for i, rows := range batches {
		errL := LibRRD(root).Update(lib, template, rows, nil)
		errN := n.Update(nat, template, rows, nil)
		if fmt.Sprint(errL) != strings.ReplaceAll(fmt.Sprint(errN), nat, lib) {
			t.Fatalf("batch %d: librrd %v, native %v", i, errL, errN)
		}
		a, _ := os.ReadFile(lib)
		b, _ := os.ReadFile(nat)
		if string(a) != string(b) {
			t.Fatalf("batch %d: the files differ", i)
		}
	}
	if s := n.Files.Stats(); s.Updates != 3 || s.Applied != 5 || len(s.Fallbacks) != 0 {
		t.Errorf("stats %+v", s)
	}
	hw := filepath.Join(dir, "hw.rrd")
	testenv.RRDTool(t, "create", hw, "--start", fmt.Sprint(t0), "--step", "300", "DS:g:GAUGE:600:U:U", "RRA:AVERAGE:0.5:1:10", "RRA:HWPREDICT:10:0.1:0.0035:5")
	if err := n.Update(hw, nil, []rrd.Sample{{Time: t0 + 300, Values: []string{"1"}}}, nil); err != nil {
		t.Fatalf("the fallback: %v", err)
	}
	if last, _ := testenv.RRDLastUpdate(t, hw); last != t0+300 {
		t.Errorf("librrd did not apply the fallback: last update %d", last)
	}
	if s := n.Files.Stats(); s.Fallbacks["archive"] != 1 {
		t.Errorf("fallbacks %v", s.Fallbacks)
	}
}

// TestNativeWriterWritesAndReplaysOnce: the writer on the native path
// writes what it writes through librrd (checkFourPolls), and an entry at
// or before the file's last update is not applied again (it is
// quarantined as stale).
func TestNativeWriterWritesAndReplaysOnce(t *testing.T) {
	testenv.NeedRRDTool(t)
	var n *NativeRRD
	e := newEnvOf(t, func(r *rrd.Root) RRD { n = NewNativeRRD(r, 8); return n }, nil)
	defer n.Close()
	putFourPolls(e, "site/r1")
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	path := e.rrdPath("site/r1")
	checkFourPolls(t, path)
	before, _ := os.ReadFile(path)
	e.putCG("site/r1", t0+600, 9000, 1024.125) // already applied
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("an applied entry was written again")
	}
	if s := n.Files.Stats(); s.Updates != 1 || s.Applied != 4 {
		t.Errorf("native stats %+v", s)
	}
}
