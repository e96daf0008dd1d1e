//go:build cgo

package spoolbackend

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdcached"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

// The rrdcached backend against real librrd and a real spool; rrdtool
// checks what is in the files.

// protoDefs are the data sources and archives of the tests' RRD files: a
// COUNTER, a DERIVE, an ABSOLUTE and a GAUGE, step 300 s.
var protoDefs = []string{"DS:c:COUNTER:600:0:U", "DS:d:DERIVE:600:U:U", "DS:a:ABSOLUTE:600:U:U", "DS:g:GAUGE:600:U:U",
	"RRA:AVERAGE:0.5:1:100", "RRA:LAST:0.5:1:100"}

// mkRRD creates file under the RRD directory with rrdtool, starting at t0.
func (e *env) mkRRD(file string, defs ...string) string {
	e.t.Helper()
	if len(defs) == 0 {
		defs = protoDefs
	}
	p := filepath.Join(e.dir, file)
	testenv.RRDCreate(e.t, p, t0, 300, defs...)
	return p
}

func at(sec int64, rest string) string { return strconv.FormatInt(sec, 10) + rest }

func TestBackendUpdateIsWrittenOnceExactly(t *testing.T) {
	e, b := newProtoEnv(t)
	ctx := context.Background()
	path := e.mkRRD("host/load.rrd")
	ups := []string{at(t0+300, ":100:-5:3:0.5"), at(t0+600, ".250:18446744073709551615:-1000000:2.5:1e-300")}
	if n, err := b.Update(ctx, "host/load.rrd", ups); n != 2 || err != nil {
		t.Fatalf("Update = %d, %v", n, err)
	}
	pending, err := b.Pending(ctx, "host/load.rrd")
	if want := []string{at(t0+300, ":100:-5:3:0.5"), ups[1]}; err != nil || !slices.Equal(pending, want) {
		t.Fatalf("Pending = %q, %v; want %q", pending, err, want)
	}
	if last, _ := testenv.RRDLastUpdate(t, path); last != t0 {
		t.Fatalf("the file was written before a flush: last update %d", last)
	}
	if flushed, err := b.Flush(ctx, "host/load.rrd"); !flushed || err != nil {
		t.Fatalf("Flush = %v, %v", flushed, err)
	}
	last, vals := testenv.RRDLastUpdate(t, path)
	want := map[string]string{"c": "18446744073709551615", "d": "-1000000", "a": "2.5", "g": "1e-300"}
	if last != t0+600 || !mapsEqual(vals, want) {
		t.Errorf("after FLUSH: last update %d %v, want %d %v", last, vals, t0+600, want)
	}
	if fi, err := b.root.ReadHeader(path); err != nil || fi.LastMilli != 250 {
		t.Errorf("the milliseconds of the update: %+v, %v; want 250", fi, err)
	}
	if p, err := b.Pending(ctx, "host/load.rrd"); err != nil || len(p) != 0 {
		t.Errorf("Pending after FLUSH = %q, %v", p, err)
	}
	if n, err := b.Forget(ctx, "host/load.rrd"); n != 0 || err != nil {
		t.Errorf("Forget with nothing pending = %d, %v; want 0 kept", n, err)
	}
	if _, err := b.Forget(ctx, "host/load.rrd"); !errors.Is(err, rrdcached.ErrNotCached) {
		t.Errorf("Forget of a forgotten file = %v, want ErrNotCached", err)
	}
	if flushed, err := b.Flush(ctx, "host/load.rrd"); flushed || err != nil {
		t.Errorf("Flush of a forgotten file = %v, %v; want nothing to flush", flushed, err)
	}
	if _, err := b.Flush(ctx, "nope.rrd"); !errors.Is(err, rrdcached.ErrNoSuchFile) {
		t.Errorf("Flush of a missing file = %v, want ErrNoSuchFile", err)
	}
	e.clock.Advance(24 * time.Hour)
	e.runPass()
	if s := e.w.Stats(); s.EntriesWritten != 2 {
		t.Errorf("entries written %d, want 2 (once each)", s.EntriesWritten)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestBackendRefusesAndCounts(t *testing.T) {
	e, b := newProtoEnvWith(t, nil, func(o *Options) { o.FutureTolerance = 10 * time.Minute })
	ctx := context.Background()
	e.mkRRD("a.rrd")
	e.mkRRD("dev1.rrd") // a poller target's file
	if err := os.Mkdir(filepath.Join(e.dir, "sub"), 0o750); err != nil {
		t.Fatal(err)
	}
	now := e.clock.Now().Unix()
	if _, err := b.Update(ctx, "a.rrd", []string{at(t0+600, ".500:1:1:1:1")}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file, update string
		want         Refusal
	}{
		{"a.rrd", at(t0+600, ".500:2:2:2:2"), RefusedTime},
		{"a.rrd", at(t0+600, ".499:2:2:2:2"), RefusedTime},
		{"a.rrd", at(t0+300, ":2:2:2:2"), RefusedTime},
		{"a.rrd", at(t0+900, ":2:2:2"), RefusedCount},
		{"a.rrd", at(t0+900, ":x:2:2:2"), RefusedSyntax},
		{"a.rrd", at(now+3600, ":2:2:2:2"), RefusedFuture},
		{"nope.rrd", at(t0+900, ":2:2:2:2"), RefusedMissing},
		{"dev1.rrd", at(t0+900, ":2:2:2:2"), RefusedClaimed},
		{"sub", at(t0+900, ":2:2:2:2"), RefusedFile},
		{"../a.rrd", at(t0+900, ":2:2:2:2"), RefusedFile},
	} {
		t.Run(tc.file+" "+tc.update, func(t *testing.T) {
			before := b.BackendStats().Refused[tc.want]
			n, err := b.Update(ctx, tc.file, []string{tc.update})
			var ue *UpdateError
			if n != 0 || !errors.As(err, &ue) || ue.Reason != tc.want {
				t.Fatalf("Update = %d, %v; want a %s refusal", n, err, tc.want)
			}
			if got := b.BackendStats().Refused[tc.want]; got != before+1 {
				t.Errorf("refusals of %s: %d, want %d", tc.want, got, before+1)
			}
		})
	}
	// rrdcached's words, which the server sends as they are.
	_, err := b.Update(ctx, "a.rrd", []string{at(t0+600, ".500:2:2:2:2")})
	var re *rrdcached.ReplyError
	if want := "illegal attempt to update using time 1700000700.500000 when last update time is 1700000700.500000 (minimum one second step)"; !errors.As(err, &re) || re.Msg != want {
		t.Errorf("a repeated time: %v, want %q", err, want)
	}
	if _, err := b.Update(ctx, "nope.rrd", []string{at(t0+900, ":2:2:2:2")}); !errors.Is(err, rrdcached.ErrNoSuchFile) {
		t.Errorf("a missing file: %v, want ErrNoSuchFile", err)
	}
	// The updates before a refused one are spooled; none after it.
	n, err := b.Update(ctx, "a.rrd", []string{at(t0+900, ":2:2:2:2"), at(t0+900, ":3:3:3:3"), at(t0+1200, ":4:4:4:4")})
	if n != 1 || refusalOf(err) != RefusedTime {
		t.Errorf("a batch with a repeated time: %d, %v; want 1 accepted and a time refusal", n, err)
	}
	if p, _ := b.Pending(ctx, "a.rrd"); len(p) != 2 {
		t.Errorf("pending %q, want the two accepted updates", p)
	}
}

// TestBackendRestartSeesSpooledUpdates: after a restart the last update
// counts the updates still spooled (indexed by hash alone, as the loader
// does), so an update at or before them is refused, not applied out of
// order; the next one is written with them.
func TestBackendRestartSeesSpooledUpdates(t *testing.T) {
	e, b := newProtoEnv(t)
	ctx := context.Background()
	path := e.mkRRD("r.rrd")
	if _, err := b.Update(ctx, "r.rrd", []string{at(t0+300, ":1:1:1:1"), at(t0+600, ":2:2:2:2")}); err != nil {
		t.Fatal(err)
	}
	key := rrd.ProtocolKey("r.rrd")
	old, ok := e.ix.Peek(spool.KeyHash(key))
	if !ok {
		t.Fatal("the updates are not indexed")
	}
	dir := e.sp.Dir()
	e.sp.Close()
	so := spool.DefaultOptions()
	so.Dir = dir
	sp, err := spool.Open(so)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	io := shm.DefaultOptions()
	io.Now = e.clock.Now
	ix, err := shm.New(io)
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range old.Times {
		if _, err := ix.Add(old.Hash, "", ts); err != nil {
			t.Fatal(err)
		}
	}
	w, err := rrdwriter.New(sp, ix, e.wo)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := New(w, sp, ix, e.bo)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := b2.Update(ctx, "r.rrd", []string{at(t0+600, ":9:9:9:9")}); n != 0 || refusalOf(err) != RefusedTime {
		t.Errorf("an update at the last spooled time after a restart: %d, %v; want a time refusal", n, err)
	}
	if _, err := b2.Update(ctx, "r.rrd", []string{at(t0+900, ":3:3:3:3")}); err != nil {
		t.Fatal(err)
	}
	if _, err := b2.Flush(ctx, "r.rrd"); err != nil {
		t.Fatal(err)
	}
	if last, vals := testenv.RRDLastUpdate(t, path); last != t0+900 || vals["g"] != "3" {
		t.Errorf("after the restart's flush: %d %v", last, vals)
	}
	if s := w.Stats(); s.EntriesWritten != 3 {
		t.Errorf("entries written %d, want 3", s.EntriesWritten)
	}
}

func TestBackendSuspendHoldsWrites(t *testing.T) {
	e, b := newProtoEnv(t)
	ctx := context.Background()
	path := e.mkRRD("s.rrd")
	if _, err := b.Suspend("s.rrd"); !errors.Is(err, rrdcached.ErrNotCached) {
		t.Errorf("Suspend of a file never updated = %v, want ErrNotCached", err)
	}
	if _, err := b.Update(ctx, "s.rrd", []string{at(t0+300, ":1:1:1:1")}); err != nil {
		t.Fatal(err)
	}
	if changed, err := b.Suspend("s.rrd"); !changed || err != nil {
		t.Fatalf("Suspend = %v, %v", changed, err)
	}
	if changed, err := b.Suspend("s.rrd"); changed || err != nil {
		t.Errorf("Suspend again = %v, %v; want already suspended", changed, err)
	}
	if _, err := b.Update(ctx, "s.rrd", []string{at(t0+600, ":1:1:1:1")}); err != nil {
		t.Fatalf("an update of a suspended file is still spooled: %v", err)
	}
	if _, err := b.Flush(ctx, "s.rrd"); !errors.Is(err, rrdwriter.ErrHeld) {
		t.Errorf("Flush of a suspended file = %v, want ErrHeld", err)
	}
	if err := e.w.FlushAll(ctx); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(24 * time.Hour)
	e.runPass()
	if last, _ := testenv.RRDLastUpdate(t, path); last != t0 {
		t.Errorf("a suspended file was written: last update %d", last)
	}
	if n := b.ResumeAll(); n != 1 {
		t.Errorf("ResumeAll = %d, want 1", n)
	}
	if _, err := b.Flush(ctx, "s.rrd"); err != nil {
		t.Fatal(err)
	}
	if last, _ := testenv.RRDLastUpdate(t, path); last != t0+600 {
		t.Errorf("after RESUME and FLUSH: last update %d, want %d", last, t0+600)
	}
	if n := b.SuspendAll(); n != 1 {
		t.Errorf("SuspendAll = %d, want the one file updated", n)
	}
}

func TestBackendForgetKeeps(t *testing.T) {
	e, b := newProtoEnv(t)
	ctx := context.Background()
	path := e.mkRRD("f.rrd")
	if _, err := b.Update(ctx, "f.rrd", []string{at(t0+300, ":1:1:1:1"), at(t0+600, ":2:2:2:2")}); err != nil {
		t.Fatal(err)
	}
	if n, err := b.Forget(ctx, "f.rrd"); n != 2 || err != nil {
		t.Fatalf("Forget = %d, %v; want 2 kept", n, err)
	}
	if _, err := b.Flush(ctx, "f.rrd"); err != nil {
		t.Fatal(err)
	}
	if last, _ := testenv.RRDLastUpdate(t, path); last != t0+600 {
		t.Errorf("forgotten updates were not written: last update %d", last)
	}
}

func TestBackendCreate(t *testing.T) {
	e, b := newProtoEnv(t)
	ctx := context.Background()
	args := rrdcached.CreateArgs{Step: 300 * time.Second, Begin: time.Unix(t0, 0), Defs: protoDefs}
	if err := b.Create(ctx, "new/c.rrd", args); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(e.dir, "new/c.rrd")
	if out := testenv.RRDTool(t, "info", path); !strings.Contains(out, `ds[d].type = "DERIVE"`) || !strings.Contains(out, fmt.Sprintf("last_update = %d", t0)) {
		t.Fatalf("rrdtool info of the created file:\n%s", out)
	}
	noOver := args
	noOver.NoOverwrite = true
	if err := b.Create(ctx, "new/c.rrd", noOver); !errors.Is(err, fs.ErrExist) {
		t.Errorf("CREATE -O of an existing file = %v, want fs.ErrExist", err)
	}
	if _, err := b.Update(ctx, "new/c.rrd", []string{at(t0+1200, ":1:1:1:1")}); err != nil {
		t.Fatal(err)
	}
	if err := b.Create(ctx, "new/c.rrd", args); err == nil || !strings.Contains(err.Error(), "still spooled") {
		t.Errorf("CREATE over pending updates = %v, want a refusal", err)
	}
	if _, err := b.Flush(ctx, "new/c.rrd"); err != nil {
		t.Fatal(err)
	}
	if err := b.Create(ctx, "new/c.rrd", args); err != nil {
		t.Fatalf("CREATE over a flushed file: %v", err)
	}
	if last, _ := testenv.RRDLastUpdate(t, path); last != t0 {
		t.Errorf("the replaced file's last update %d, want the new begin %d", last, t0)
	}
	// The new file takes updates from its own start again.
	if _, err := b.Update(ctx, "new/c.rrd", []string{at(t0+300, ":1:1:1:1")}); err != nil {
		t.Errorf("an update of the replaced file: %v", err)
	}
	if err := b.Create(ctx, "dev1.rrd", args); refusalOf(err) != RefusedClaimed {
		t.Errorf("CREATE of a poller target's file = %v, want refused", err)
	}
	if s := b.BackendStats(); s.Creates != 2 || s.Overwrites != 1 {
		t.Errorf("creates %d, overwrites %d; want 2 and 1", s.Creates, s.Overwrites)
	}
}

// TestBackendReadsMatchRRDTool: FIRST, LAST, INFO and FETCH give what
// rrdtool reads from the file, and see updates not yet flushed.
func TestBackendReadsMatchRRDTool(t *testing.T) {
	e, b := newProtoEnv(t)
	ctx := context.Background()
	path := e.mkRRD("m.rrd")
	var ups []string
	for i := int64(1); i <= 6; i++ {
		ups = append(ups, at(t0+300*i+7, fmt.Sprintf(":%d:%d:%d:%d.5", 1000*i, -i, i, i)))
	}
	if _, err := b.Update(ctx, "m.rrd", ups); err != nil {
		t.Fatal(err)
	}
	last, err := b.Last(ctx, "m.rrd")
	if want := t0 + 300*6; err != nil || last.Unix() != want {
		t.Errorf("Last of spooled updates = %v, %v; want %d (rounded to the step, as rrdcached)", last.Unix(), err, want)
	}
	fr, err := b.Fetch(ctx, "m.rrd", rrdcached.FetchArgs{CF: "AVERAGE", Start: time.Unix(t0, 0), End: time.Unix(t0+1800, 0)})
	if err != nil {
		t.Fatal(err)
	}
	want := testenv.RRDFetch(t, path, t0, t0+1800)
	if len(fr.Rows) < 6 || len(fr.Rows) != int(fr.End.Sub(fr.Start)/fr.Step) || !slices.Equal(fr.DS, []string{"c", "d", "a", "g"}) {
		t.Fatalf("Fetch: %d rows of %v from %v to %v", len(fr.Rows), fr.DS, fr.Start, fr.End)
	}
	for i, row := range fr.Rows {
		ts := fr.Start.Add(time.Duration(i+1) * fr.Step).Unix()
		if _, ok := want[ts]; !ok && ts > t0+1800 {
			continue // librrd ends the rows at a step boundary after End
		}
		cols := strings.Fields(want[ts])
		for j := range row {
			if len(cols) != 4 || !nearly(row[j], cols[j]) {
				t.Errorf("row %d: Fetch %v, rrdtool fetch %q", ts, row, want[ts])
				break
			}
		}
	}
	if want := strings.TrimSpace(testenv.RRDTool(t, "last", path)); fmt.Sprint(t0+300*6+7) != want {
		t.Errorf("rrdtool last %s after the FETCH's flush", want)
	}
	first, err := b.First(ctx, "m.rrd", 1)
	if want := strings.TrimSpace(testenv.RRDTool(t, "first", path, "--rraindex", "1")); err != nil || fmt.Sprint(first.Unix()) != want {
		t.Errorf("First = %v, %v; rrdtool first %s", first.Unix(), err, want)
	}
	info, err := b.Info(ctx, "m.rrd")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(testenv.RRDTool(t, "info", path)), "\n")
	if len(info) != len(lines) {
		t.Fatalf("Info has %d items, rrdtool info %d lines", len(info), len(lines))
	}
	for i, l := range lines {
		k, _, _ := strings.Cut(l, " = ")
		if info[i].Key != k {
			t.Fatalf("Info item %d is %q, rrdtool info has %q", i, info[i].Key, k)
		}
	}
	for _, iv := range info {
		switch iv.Key {
		case "last_update":
			if iv.Type != 1 || iv.Value != fmt.Sprint(t0+300*6+7) {
				t.Errorf("INFO %+v", iv)
			}
		case "ds[c].type":
			if iv.Type != 2 || iv.Value != "COUNTER" {
				t.Errorf("INFO %+v", iv)
			}
		case "ds[g].value":
			if iv.Type != 0 || !strings.Contains(iv.Value, "e+") {
				t.Errorf("INFO %+v, want %%0.10e", iv)
			}
		}
	}
	if _, err := b.Fetch(ctx, "m.rrd", rrdcached.FetchArgs{CF: "NOPE"}); err == nil {
		t.Error("Fetch of an unknown consolidation function succeeded")
	}
	if _, err := b.Info(ctx, "nope.rrd"); err == nil || !strings.Contains(err.Error(), "No such file") {
		t.Errorf("Info of a missing file = %v, want librrd's error", err)
	}
}

func TestBackendList(t *testing.T) {
	e, b := newProtoEnv(t)
	ctx := context.Background()
	e.mkRRD("a.rrd")
	e.mkRRD("sub/b.rrd")
	e.mkRRD("sub/deep/c.rrd")
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "x.rrd"), nil, 0o640); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{
		"link-in.rrd": filepath.Join(e.dir, "a.rrd"), "link-out.rrd": filepath.Join(outside, "x.rrd"),
		"linkdir": filepath.Join(e.dir, "sub"), "linkout": outside,
	} {
		if err := os.Symlink(target, filepath.Join(e.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(e.dir, "notes.txt"), nil, 0o640); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir       string
		recursive bool
		want      []string
	}{
		{"", false, []string{"a.rrd", "link-in.rrd", "linkdir", "sub"}},
		{"", true, []string{"a.rrd", "link-in.rrd", "sub/b.rrd", "sub/deep/c.rrd"}},
		{"sub", false, []string{"b.rrd", "deep"}},
		{"sub/b.rrd", false, []string{"b.rrd"}},
	} {
		got, err := b.List(ctx, tc.dir, tc.recursive)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("List(%q, %v) = %q, %v; want %q", tc.dir, tc.recursive, got, err, tc.want)
		}
	}
	if _, err := b.List(ctx, "linkout", false); err == nil {
		t.Error("List of a symlink out of the RRD directory succeeded")
	}
}

func TestBackendQueueAndStats(t *testing.T) {
	e, b := newProtoEnv(t)
	ctx := context.Background()
	e.mkRRD("q/a.rrd")
	e.mkRRD("q/b.rrd")
	for file, n := range map[string]int{"q/a.rrd": 2, "q/b.rrd": 1} {
		var ups []string
		for i := 1; i <= n; i++ {
			ups = append(ups, at(t0+300*int64(i), ":1:1:1:1"))
		}
		if _, err := b.Update(ctx, file, ups); err != nil {
			t.Fatal(err)
		}
	}
	e.putCG("dev1", t0+300, 1, 1)
	q, err := b.Queue(ctx)
	want := []rrdcached.Queued{{File: "dev1.rrd", Pending: 1}, {File: "q/a.rrd", Pending: 2}, {File: "q/b.rrd", Pending: 1}}
	if err != nil || !slices.Equal(q, want) {
		t.Errorf("Queue = %+v, %v; want %+v", q, err, want)
	}
	var names []string
	stats := map[string]uint64{}
	for _, s := range b.Stats() {
		names = append(names, s.Name)
		stats[s.Name] = s.Value
	}
	rrdcachedNames := []string{"QueueLength", "UpdatesReceived", "FlushesReceived", "UpdatesWritten", "DataSetsWritten",
		"TreeNodesNumber", "TreeDepth", "JournalBytes", "JournalRotate"}
	if !slices.Equal(names, rrdcachedNames) {
		t.Errorf("STATS names %q, want rrdcached's %q", names, rrdcachedNames)
	}
	if stats["QueueLength"] != 3 || stats["UpdatesReceived"] != 2 || stats["TreeNodesNumber"] != 2 || stats["TreeDepth"] != 2 || stats["JournalBytes"] == 0 {
		t.Errorf("STATS %v", stats)
	}
	if s := b.BackendStats(); s.ValuesReceived != 3 {
		t.Errorf("updates spooled %d, want 3", s.ValuesReceived)
	}
}

// TestBackendConcurrentUpdatesAndFlushes: one client updates while
// another flushes and the writer runs; every update lands once, at its
// time, with its value (rrdtool fetch of the LAST archive).
func TestBackendConcurrentUpdatesAndFlushes(t *testing.T) {
	e, b := newProtoEnvWith(t, func(o *rrdwriter.Options) { o.WriteDelay, o.WriteJitter, o.Tick = 0, 0, time.Millisecond }, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	path := e.mkRRD("c.rrd")
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = e.w.Run(ctx) }()
	const n = 40
	done := make(chan struct{})
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := b.Flush(ctx, "c.rrd"); err != nil {
				if ctx.Err() == nil { // not the end of the test, waiting for the last flush's removal
					t.Error(err)
				}
				return
			}
		}
	}()
	for i := int64(1); i <= n; i++ {
		if _, err := b.Update(ctx, "c.rrd", []string{at(t0+300*i, fmt.Sprintf(":U:U:U:%d", i))}); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	if _, err := b.Flush(ctx, "c.rrd"); err != nil {
		t.Fatal(err)
	}
	cancel()
	wg.Wait()
	out := testenv.RRDTool(t, "fetch", path, "LAST", "-r", "300", "-s", fmt.Sprint(t0), "-e", fmt.Sprint(t0+300*n))
	for i := int64(1); i <= n; i++ {
		line := fmt.Sprintf("%d: ", t0+300*i)
		j := strings.Index(out, line)
		if j < 0 {
			t.Fatalf("no row %d in\n%s", t0+300*i, out)
		}
		g := strings.Fields(out[j+len(line):])[3]
		if v, err := strconv.ParseFloat(g, 64); err != nil || v != float64(i) {
			t.Errorf("row %d: gauge %s, want %d", t0+300*i, g, i)
		}
	}
	if s := e.w.Stats(); s.EntriesWritten != n {
		t.Errorf("entries written %d, want %d (each once)", s.EntriesWritten, n)
	}
}

// nearly reports whether v is what rrdtool printed (10 significant digits),
// NaN as nan.
func nearly(v float64, printed string) bool {
	p, err := strconv.ParseFloat(printed, 64)
	if err != nil || math.IsNaN(p) {
		return math.IsNaN(v)
	}
	return math.Abs(v-p) <= 1e-9*math.Max(math.Abs(p), 1e-300)
}

// TestBackendMetricsCountRefusals: a refused update is counted under its
// reason in /metrics' collector.
func TestBackendMetricsCountRefusals(t *testing.T) {
	e, b := newProtoEnv(t)
	e.mkRRD("x.rrd")
	if _, err := b.Update(context.Background(), "x.rrd", []string{at(t0+300, ":1:1")}); refusalOf(err) != RefusedCount {
		t.Fatalf("Update = %v, want a count refusal", err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewCollector(b.BackendStats))
	want := `# HELP spoold_rrdcached_updates_refused_total Updates of the rrdcached protocol refused, by reason (syntax, count, time, future, missing, file, claimed, spool).
# TYPE spoold_rrdcached_updates_refused_total counter
spoold_rrdcached_updates_refused_total{reason="claimed"} 0
spoold_rrdcached_updates_refused_total{reason="count"} 1
spoold_rrdcached_updates_refused_total{reason="file"} 0
spoold_rrdcached_updates_refused_total{reason="future"} 0
spoold_rrdcached_updates_refused_total{reason="missing"} 0
spoold_rrdcached_updates_refused_total{reason="spool"} 0
spoold_rrdcached_updates_refused_total{reason="syntax"} 0
spoold_rrdcached_updates_refused_total{reason="time"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "spoold_rrdcached_updates_refused_total"); err != nil {
		t.Error(err)
	}
}
