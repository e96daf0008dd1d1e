//go:build cgo

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoold/spoold/diskstat"
	"github.com/spoold/spoold/graph"
	"github.com/spoold/spoold/internal/testing/spoolgen"
	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

// TestWiredWriterStaysInsideTheRRDDir builds the writer as the daemon does
// (writerRRD: LocalRRD beneath --rrd-dir, metered) on each of its paths:
// native updates or librrd, prefetch on or off, the file's header known
// to the writer (written once by it) or not (made by rrdtool). After
// values are spooled (what an acknowledgement promises), the file's
// directory is swapped for a symlink to an outside directory holding a
// file of the same name. The writer's pass is refused: the outside file
// keeps every byte, no file is created out there, the values stay spooled,
// and each refusal is counted (kind path), naming the file and why; a
// graph of the file is refused too.
func TestWiredWriterStaysInsideTheRRDDir(t *testing.T) {
	testenv.NeedRRDTool(t)
	for _, native := range []bool{true, false} {
		for _, prefetch := range []bool{true, false} {
			for _, warm := range []bool{true, false} {
				name := fmt.Sprintf("native=%v/prefetch=%v/warm=%v", native, prefetch, warm)
				t.Run(name, func(t *testing.T) { testWiredWriterStaysInside(t, native, prefetch, warm) })
			}
		}
	}
}

func testWiredWriterStaysInside(t *testing.T, native, prefetch, warm bool) {
	e := newWiredWriter(t, func(o *rrdwriter.Options) { o.Native, o.Prefetch = native, prefetch })
	ctx := context.Background()
	const t0 = int64(1_700_000_100)
	if warm {
		e.put("sw1/ge-1", t0)
		if err := e.w.FlushAll(ctx); err != nil {
			t.Fatal(err)
		}
	} else {
		testenv.RRDCreate(t, filepath.Join(e.dir, "sw1", "ge-1.rrd"), t0, 300, "DS:c:COUNTER:600:0:U", "DS:g:GAUGE:600:U:U", "RRA:AVERAGE:0.5:1:100")
	}
	refs := []spool.Ref{e.put("sw1/ge-1", t0+300), e.put("sw1/ge-1", t0+600), e.put("sw1/ge-2", t0+300)}

	outside := testenv.SwapForSymlink(t, filepath.Join(e.dir, "sw1"))
	outFile := filepath.Join(outside, "ge-1.rrd")
	before, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.w.FlushAll(ctx); err == nil {
		t.Error("the writer's pass through the swapped symlink succeeded")
	}
	if after, _ := os.ReadFile(outFile); !bytes.Equal(before, after) {
		t.Error("the writer wrote the spooled values into the file outside the RRD directory")
	}
	if _, err := os.Stat(filepath.Join(outside, "ge-2.rrd")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was created outside the RRD directory: %v", err)
	}
	for _, r := range refs {
		if _, err := os.Stat(e.sp.EntryPath(r)); err != nil {
			t.Errorf("a refused value left the spool: %v", err)
		}
	}
	if n := e.w.Stats().Errors[rrdwriter.KindPath]; n < 2 {
		t.Errorf("writer errors of kind path = %d, want both files' refusals", n)
	}
	errs := e.w.TargetErrors()
	if len(errs) != 2 {
		t.Errorf("target errors %+v, want both files'", errs)
	}
	for _, te := range errs {
		if te.Kind != rrdwriter.KindPath || !strings.Contains(te.Err, te.Path) || !strings.Contains(te.Err, "leads out of the RRD directory") {
			t.Errorf("target error %+v: want kind path, naming the file and why", te)
		}
	}
	if _, err := e.w.Graph(ctx, "sw1/ge-1", graph.Options{}.Draw); !errors.Is(err, rrd.ErrOutside) {
		t.Errorf("a graph through the swapped symlink = %v, want rrd.ErrOutside", err)
	}
}

// wiredWriter is a writer built by the daemon's writerRRD, on a spool and
// index of its own.
type wiredWriter struct {
	sp  *spool.Spool
	ix  *shm.Index
	w   *rrdwriter.Writer
	dir string // --rrd-dir
	t   *testing.T
}

func newWiredWriter(t *testing.T, edit func(*rrdwriter.Options)) *wiredWriter {
	t.Helper()
	sp := spoolgen.OpenTest(t, filepath.Join(t.TempDir(), "spool"))
	ix, err := shm.New(shm.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	wo := rrdwriter.DefaultOptions()
	wo.Dir, wo.WriteDelay, wo.WriteJitter = filepath.Join(t.TempDir(), "rrd"), 0, 0
	wo.FutureTolerance = 1 << 62 // the polls are dated 2023
	wo.Layout = func(string) (rrd.Layout, bool) {
		return rrd.Layout{Step: 300 * time.Second, RRAs: []string{"RRA:AVERAGE:0.5:1:100"}, DS: []rrd.DataSource{
			{Name: "c", Type: rrd.Counter, Heartbeat: 600 * time.Second, Min: 0, Max: math.NaN()},
			{Name: "g", Type: rrd.Gauge, Heartbeat: 600 * time.Second, Min: math.NaN(), Max: math.NaN()},
		}}, true
	}
	edit(&wo)
	var tally diskstat.Tally
	if wo.RRD, _, err = writerRRD(wo, &tally); err != nil {
		t.Fatal(err)
	}
	w, err := rrdwriter.New(sp, ix, wo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return &wiredWriter{sp: sp, ix: ix, w: w, dir: wo.Dir, t: t}
}

// put spools and indexes a poll of key at ts.
func (e *wiredWriter) put(key string, ts int64) spool.Ref {
	e.t.Helper()
	ent := spool.Entry{Key: key, Time: ts, Values: []spool.Value{
		{Name: "c", Type: spool.Counter, Counter: uint64(ts)},
		{Name: "g", Type: spool.Gauge, Gauge: float64(ts % 7)},
	}}
	ref, err := e.sp.Write(&ent)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.ix.Add(ref.Hash, key, ts); err != nil {
		e.t.Fatal(err)
	}
	return ref
}

// TestDaemonProtocolUpdatesStayInsideRRDDir: issue's reproduction against
// the daemon as it runs (spoold --listen unix:S --rrd-dir R --write-delay
// 8s), with native updates and with librrd: a client CREATEs and UPDATEs
// a/x.rrd over the protocol (acknowledged), then R/a is swapped for a
// symlink to an outside directory holding x.rrd. When the write delay
// passes, the writer is refused: the outside file keeps every byte, the
// refusal is in /status (kind path, naming the file and why), and after
// the stop (whose flush is refused too) both values are still spooled.
func TestDaemonProtocolUpdatesStayInsideRRDDir(t *testing.T) {
	requireRRDTool(t)
	for _, native := range []bool{true, false} {
		t.Run(fmt.Sprintf("native=%v", native), func(t *testing.T) {
			testDaemonProtocolStaysInside(t, fmt.Sprintf("--rrd-native=%v", native))
		})
	}
}

func testDaemonProtocolStaysInside(t *testing.T, extra ...string) {
	r := newProtoRig(t)
	p := r.start(t, append([]string{"--write-delay", "8s", "--write-jitter", "0"}, extra...)...)
	c, err := dialProto(r.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	now := time.Now().Unix()
	for _, line := range []string{
		fmt.Sprintf("CREATE a/x.rrd -s 1 -b %d DS:g:GAUGE:10:U:U RRA:AVERAGE:0.5:1:100", now-10),
		fmt.Sprintf("UPDATE a/x.rrd %d:1 %d:2", now-1, now),
	} {
		if rep, err := c.do(line); err != nil || rep.Status < 0 {
			t.Fatalf("%s: %+v, %v", line, rep, err)
		}
	}
	outside := testenv.SwapForSymlink(t, r.rrd("a"))
	outFile := filepath.Join(outside, "x.rrd")
	before, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	if last, _ := testenv.RRDLastUpdate(t, outFile); last != now-10 {
		t.Fatalf("the file was updated (last update %d) before its directory was swapped: the write delay is too short for this machine", last)
	}
	st := p.waitFor(t, "the writer's pass over a/x.rrd", func(st map[string]any) bool {
		return num(st, "writer", "errors", "path") >= 1 || num(st, "writer", "entries_written") >= 1
	})
	if n := num(st, "writer", "entries_written"); n != 0 {
		t.Errorf("the writer wrote %v of the acknowledged updates through the swapped symlink", n)
	}
	errs, _ := st["writer_errors"].([]any)
	found := false
	for _, v := range errs {
		te, _ := v.(map[string]any)
		msg, _ := te["error"].(string)
		if te["kind"] == "path" && strings.Contains(msg, r.rrd("a/x.rrd")) && strings.Contains(msg, "leads out of the RRD directory") {
			found = true
		}
	}
	if !found {
		t.Errorf("writer errors %v: want kind path naming %s and why", errs, r.rrd("a/x.rrd"))
	}
	if after, _ := os.ReadFile(outFile); !bytes.Equal(before, after) {
		t.Error("the daemon wrote the acknowledged updates into the file outside the RRD directory")
	}
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.stderr)
	}
	if after, _ := os.ReadFile(outFile); !bytes.Equal(before, after) {
		t.Error("the shutdown flush wrote the acknowledged updates into the file outside the RRD directory")
	}
	if n := spooledPolls(t, r.dir, spoolEntries(t, r.dir)); n != 2 {
		t.Errorf("%d updates spooled after the refusals, want the 2 acknowledged", n)
	}
}
