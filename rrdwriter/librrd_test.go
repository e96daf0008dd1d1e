//go:build cgo

package rrdwriter

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spoold/spoold/graph"
	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/spool"
)

func newLibEnv(t *testing.T, edit func(*Options)) *env {
	testenv.NeedRRDTool(t)
	return newEnvOf(t, LibRRD, edit)
}

// putFourPolls spools four polls of key; checkFourPolls checks that the
// RRD file at path holds them exactly, created from testLayout.
func putFourPolls(e *env, key string) []spool.Ref {
	var refs []spool.Ref
	for i, g := range []float64{1.5, 2.25, 1024.125, 0.5} {
		refs = append(refs, e.putCG(key, t0+300*int64(i), uint64(3000*i*i), g))
	}
	return refs
}

func checkFourPolls(t *testing.T, path string) {
	t.Helper()
	last, vals := testenv.RRDLastUpdate(t, path)
	if last != t0+900 || vals["c"] != "27000" || vals["g"] != "0.5" {
		t.Fatalf("lastupdate of %s: %d %v", path, last, vals)
	}
	got := testenv.RRDFetch(t, path, t0, t0+900)
	// c's rate is Δ/300: 3000/300, 9000/300, 15000/300.
	want := map[int64]string{t0 + 300: "10 2.25", t0 + 600: "30 1024.125", t0 + 900: "50 0.5"}
	for ts, w := range want {
		if got[ts] != w {
			t.Fatalf("fetch of %s at %d: %q, want %q (all: %v)", path, ts, got[ts], w, got)
		}
	}
	info := testenv.RRDTool(t, "info", path)
	for _, s := range []string{"step = 300", `ds[c].type = "COUNTER"`, `ds[g].type = "GAUGE"`, "rra[7].rows = 797", `rra[7].cf = "MAX"`} {
		if !strings.Contains(info, s) {
			t.Fatalf("rrdtool info of %s lacks %q", path, s)
		}
	}
}

func TestLibRRDValuesLandExactly(t *testing.T) {
	e := newLibEnv(t, nil)
	putFourPolls(e, "site/r1")
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	path := e.rrdPath("site/r1")
	if want := filepath.Join(e.dir, "site", "r1.rrd"); path != want {
		t.Fatalf("path %s, want %s", path, want)
	}
	checkFourPolls(t, path)
	if s := e.w.Stats(); s.UpdateCalls != 1 || s.EntriesWritten != 4 || s.ValuesWritten != 8 || s.Creates != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestLibRRDCrashReplayAppliesOnce(t *testing.T) {
	e := newLibEnv(t, nil)
	for i := range int64(3) {
		e.putCG("r", t0+300*i, uint64(300*i), float64(i))
	}
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	path := e.rrdPath("r")
	before := testenv.RRDFetch(t, path, t0, t0+600)
	// The crash: the update landed, the entries were not removed. A new
	// process finds them again, plus one new poll.
	for i := range int64(3) {
		e.putCG("r", t0+300*i, 999, 999)
	}
	fresh := e.putCG("r", t0+900, 900, 3)
	w2, err := New(e.sp, e.ix, e.w.o)
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.FlushAll(context.Background()); err != nil {
		t.Fatalf("replay: %v", err)
	}
	if s := w2.Stats(); s.SkippedAlreadyApplied != 3 || s.EntriesWritten != 1 || s.UpdateCalls != 1 || s.QueueLength != 0 {
		t.Fatalf("replay stats %+v", s)
	}
	after := testenv.RRDFetch(t, path, t0, t0+600)
	if after[t0+300] != before[t0+300] || after[t0+600] != before[t0+600] || before[t0+600] != "1 2" {
		t.Fatalf("replay changed the file:\nbefore %v\nafter  %v", before, after)
	}
	if last, vals := testenv.RRDLastUpdate(t, path); last != t0+900 || vals["c"] != "900" || e.exists(fresh) {
		t.Fatalf("new entry: lastupdate %d %v", last, vals)
	}
}

func TestLibRRDBadValueInMiddleIsQuarantined(t *testing.T) {
	e := newLibEnv(t, nil)
	e.putCG("r", t0, 3000, 1)
	e.putCG("r", t0+300, 6000, 2)
	// A gauge where the file has a COUNTER: librrd rejects "1.5".
	bad := e.put("r", t0+600, 0, gauge("c", 1.5), gauge("g", 3))
	e.putCG("r", t0+900, 12000, 4)
	e.putCG("r", t0+1200, 15000, 5)
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	path := e.rrdPath("r")
	if last, vals := testenv.RRDLastUpdate(t, path); last != t0+1200 || vals["c"] != "15000" || vals["g"] != "5" {
		t.Fatalf("lastupdate %d %v", last, vals)
	}
	got := testenv.RRDFetch(t, path, t0, t0+1200)
	for ts, w := range map[int64]string{t0 + 300: "10 2", t0 + 1200: "10 5"} {
		if got[ts] != w {
			t.Fatalf("fetch at %d: %q, want %q (all %v)", ts, got[ts], w, got)
		}
	}
	q := e.quarantined()
	if len(q) != 1 || !strings.Contains(q[0], "not a simple unsigned integer: '1.5'") || e.exists(bad) {
		t.Fatalf("quarantine %q", q)
	}
	if s := e.w.Stats(); s.EntriesWritten != 4 || s.Quarantined != 1 || s.UpdateCalls != 2 || s.QueueLength != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestLibRRDCorruptFileKeepsEntriesOthersGoOn(t *testing.T) {
	e := newLibEnv(t, nil)
	broken := e.rrdPath("broken")
	if err := os.MkdirAll(filepath.Dir(broken), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(broken, bytes.Repeat([]byte("garbage!"), 100), 0o644); err != nil {
		t.Fatal(err)
	}
	kept := e.putCG("broken", t0, 1, 1)
	e.putCG("ok", t0, 1, 1)
	e.putCG("ok", t0+300, 301, 2)
	err := e.w.FlushAll(context.Background())
	if err == nil || !strings.Contains(err.Error(), "1 targets failed") {
		t.Fatalf("flush all: %v", err)
	}
	te := e.w.TargetErrors()
	if len(te) != 1 || te[0].Key != "broken" || te[0].Kind != KindCorrupt || !e.exists(kept) {
		t.Fatalf("target errors %+v, entry kept %v", te, e.exists(kept))
	}
	if last, _ := testenv.RRDLastUpdate(t, e.rrdPath("ok")); last != t0+300 {
		t.Fatalf("other target: last update %d", last)
	}
	if b, _ := os.ReadFile(broken); !bytes.Equal(b, bytes.Repeat([]byte("garbage!"), 100)) {
		t.Fatal("corrupt file was modified")
	}
	if s := e.w.Stats(); s.EntriesPending != 1 || s.Errors[KindCorrupt] != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestLibRRDProfileMismatchNeverOverwrites(t *testing.T) {
	e := newLibEnv(t, nil)
	path := e.rrdPath("r")
	os.MkdirAll(filepath.Dir(path), 0o755)
	testenv.RRDTool(t, "create", path, "--start", fmt.Sprint(t0-300), "--step", "300", "DS:x:GAUGE:600:U:U", "RRA:AVERAGE:0.5:1:10")
	orig, _ := os.ReadFile(path)
	ref := e.putCG("r", t0, 1, 1)
	e.w.FlushAll(context.Background())
	if te := e.w.TargetErrors(); len(te) != 1 || te[0].Kind != KindMismatch || !e.exists(ref) {
		t.Fatalf("target errors %+v", te)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, orig) {
		t.Fatal("file changed")
	}
}

func TestLibRRDConcurrentGraphAndUpdate(t *testing.T) {
	e := newLibEnv(t, func(o *Options) { o.WriteDelay, o.WriteJitter, o.Tick = 0, 0, time.Millisecond })
	e.putCG("r", t0, 0, 0)
	if err := e.flush("r"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		e.w.Run(ctx)
	}()
	go func() {
		defer wg.Done()
		for range 20 {
			img, err := e.w.Graph(context.Background(), "r", graph.Options{Start: time.Unix(t0, 0), End: time.Unix(t0+30*300, 0)}.Draw)
			if err != nil || !bytes.HasPrefix(img, []byte("\x89PNG")) {
				t.Errorf("graph: %v (%d bytes)", err, len(img))
				return
			}
		}
	}()
	const n = 30
	for i := int64(1); i <= n; i++ {
		e.putCG("r", t0+300*i, uint64(300*i), float64(i))
		if i%3 == 0 {
			if err := e.flush("r"); err != nil {
				t.Error(err)
			}
		}
	}
	if err := e.flush("r"); err != nil {
		t.Error(err)
	}
	cancel()
	wg.Wait()
	if last, vals := testenv.RRDLastUpdate(t, e.rrdPath("r")); last != t0+300*n || vals["g"] != fmt.Sprint(n) {
		t.Fatalf("lastupdate %d %v", last, vals)
	}
	if s := e.w.Stats(); s.EntriesWritten != n+1 || s.QueueLength != 0 || s.Graphs != 20 {
		t.Fatalf("stats %+v", s)
	}
}

// TestLibRRDMillisecondsMakeRatesExact polls a counter that grows 10 per
// second at times off the whole second: with the milliseconds passed to
// librrd the rates are 10 (to librrd's double arithmetic, 1e-8); whole
// seconds would give 10.0167 and 9.993.
func TestLibRRDMillisecondsMakeRatesExact(t *testing.T) {
	e := newLibEnv(t, nil)
	for _, p := range []struct {
		ts int64
		ms uint16
		c  uint64
	}{{t0, 0, 0}, {t0 + 300, 500, 3005}, {t0 + 600, 300, 6003}} {
		ent := spool.Entry{Key: "r", Time: p.ts, Milli: p.ms, Values: []spool.Value{cnt("c", p.c), gauge("g", 1)}}
		ref, err := e.sp.Write(&ent)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.ix.Add(ref.Hash, "r", p.ts); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := testenv.RRDFetch(t, e.rrdPath("r"), t0, t0+600)
	for _, ts := range []int64{t0 + 300, t0 + 600} {
		var rate, g float64
		if _, err := fmt.Sscan(got[ts], &rate, &g); err != nil || math.Abs(rate-10) > 1e-6 || g != 1 {
			t.Fatalf("fetch at %d: %q, want a rate of 10 within 1e-6 (all: %v)", ts, got[ts], got)
		}
	}
}
