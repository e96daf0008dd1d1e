//go:build cgo

package rrdwriter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
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

// infoCounter is a NativeRRD whose Info calls, and updates that read the
// info themselves, are counted.
type infoCounter struct {
	*NativeRRD
	infos, planned atomic.Int32
}

func (c *infoCounter) UpdateFor(path string, rowsFor rrd.RowsFor, opened func(fd int)) (bool, error) {
	planned, err := c.NativeRRD.UpdateFor(path, rowsFor, opened)
	if planned {
		c.planned.Add(1)
	}
	return planned, err
}

func (c *infoCounter) Info(path string) (rrd.FileInfo, error) {
	c.infos.Add(1)
	return c.NativeRRD.Info(path)
}

// TestNativeFirstUpdateReadsTheFileOnce: after a start, the writer's first
// update of a file that exists reads the file's info in the update itself
// (no Info call), and plans from it as from Info: entries the file holds
// already (the update landed, the process stopped before their segments
// were removed) are not applied again and are removed, the new ones land;
// a file whose data sources are not the entries' is not written and its
// entries stay; a file the native path does not handle is read and
// updated by librrd.
func TestNativeFirstUpdateReadsTheFileOnce(t *testing.T) {
	testenv.NeedRRDTool(t)
	var n *infoCounter
	// No read-ahead: a file's header read ahead (one not in the page
	// cache) is the writer's info, and its update reads none
	// (TestReadAheadLeavesACachedHeaderToTheUpdate).
	e := newEnvOf(t, func(r *rrd.Root) RRD { n = &infoCounter{NativeRRD: NewNativeRRD(r, 8)}; return n },
		func(o *Options) { o.Prefetch = false })
	defer n.Close()
	refs := putFourPolls(e, "site/r1")
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	path := e.rrdPath("site/r1")
	checkFourPolls(t, path)
	before := testenv.RRDFetch(t, path, t0, t0+900)
	// The stop before the removal: the same entries again, one new poll.
	for i := range refs {
		e.putCG("site/r1", t0+300*int64(i), 999, 999)
	}
	fresh := e.putCG("site/r1", t0+1200, 33000, 7)
	other := filepath.Join(e.dir, rrd.RRDPath("site/other"))
	testenv.RRDTool(t, "create", other, "--start", fmt.Sprint(t0-1), "--step", "300", "DS:x:GAUGE:600:U:U", "RRA:AVERAGE:0.5:1:10")
	otherBytes, _ := os.ReadFile(other)
	kept := e.putCG("site/other", t0, 1, 1)
	hw := filepath.Join(e.dir, rrd.RRDPath("site/hw"))
	testenv.RRDTool(t, "create", hw, "--start", fmt.Sprint(t0-1), "--step", "300", "DS:c:COUNTER:600:0:U", "DS:g:GAUGE:600:U:U",
		"RRA:AVERAGE:0.5:1:10", "RRA:HWPREDICT:10:0.1:0.0035:5")
	e.putCG("site/hw", t0, 0, 4.5)
	n.NativeRRD.Close()
	n.NativeRRD = NewNativeRRD(e.w.o.RRD.Root(), 8) // the restarted process's: nothing kept
	n.infos.Store(0)
	n.planned.Store(0)
	w2, err := New(e.sp, e.ix, e.w.o)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if err := w2.FlushAll(context.Background()); err != nil {
		t.Logf("flush: %v", err)
	}
	w2.WaitRemovals()
	if te := w2.TargetErrors(); len(te) != 1 || te[0].Kind != KindMismatch || !strings.Contains(te[0].Err, "site/other") {
		t.Errorf("target errors %+v, want site/other's mismatch", te)
	}
	if s := w2.Stats(); s.SkippedAlreadyApplied != 4 || s.EntriesWritten != 2 || s.UpdateCalls != 2 {
		t.Errorf("stats %+v", s)
	}
	after := testenv.RRDFetch(t, path, t0, t0+900)
	if ts := []int64{t0 + 300, t0 + 600, t0 + 900}; slices.ContainsFunc(ts, func(ts int64) bool { return after[ts] != before[ts] }) {
		t.Errorf("the replay changed the file:\nbefore %v\nafter  %v", before, after)
	}
	if last, vals := testenv.RRDLastUpdate(t, path); last != t0+1200 || vals["c"] != "33000" || e.exists(fresh) {
		t.Errorf("the new entry: last update %d %v, segment left %v", last, vals, e.exists(fresh))
	}
	if b, _ := os.ReadFile(other); string(b) != string(otherBytes) || !e.exists(kept) {
		t.Errorf("the mismatched file was written (%v) or its entry dropped (%v)", string(b) != string(otherBytes), !e.exists(kept))
	}
	if last, vals := testenv.RRDLastUpdate(t, hw); last != t0 || vals["g"] != "4.5" {
		t.Errorf("librrd's file: last update %d %v", last, vals)
	}
	// The info of site/r1 and site/other read by their updates, that
	// of the file librrd handles by Info (the native update did not
	// read it).
	if planned, infos := n.planned.Load(), n.infos.Load(); planned != 2 || infos != 1 {
		t.Errorf("%d updates read the info, %d Info calls; want 2 and 1", planned, infos)
	}
}
