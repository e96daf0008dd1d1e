//go:build cgo

package rrdwriter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/spoold/spoold/internal/testing/rrdctest"
	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdcached"
	"github.com/spoold/spoold/rrdcached/spoolbackend"
	"github.com/spoold/spoold/spool"
)

// newForwardEnv is a writer forwarding to a Debian rrdcached that queues
// updates for an hour (-w 3600): only the writer's FLUSH writes them.
func newForwardEnv(t *testing.T) (*env, *rrdctest.Server) {
	testenv.NeedRRDTool(t)
	srv := rrdctest.StartServer(t, "", "-w", "3600", "-f", "7200")
	e := newEnv(t, nil, func(o *Options) {
		o.Forward, o.ForwardTimeout = srv.Address(), 5*time.Second
	})
	t.Cleanup(func() { e.w.Close() })
	return e, srv
}

func (e *env) remotePath(srv *rrdctest.Server, key string) string {
	return filepath.Join(srv.Dir, rrd.RRDPath(key))
}

func TestForwardValuesLandOnRemote(t *testing.T) {
	e, srv := newForwardEnv(t)
	refs := putFourPolls(e, "site/r1")
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkFourPolls(t, e.remotePath(srv, "site/r1"))
	for _, r := range refs {
		if e.exists(r) {
			t.Fatalf("segment %v kept after the remote confirmed it", r)
		}
	}
	if _, err := os.Stat(e.rrdPath("site/r1")); !os.IsNotExist(err) {
		t.Fatalf("a local RRD file or directory was made: %v", err)
	}
	s := e.w.Stats()
	if f := s.Forward; f == nil || !f.Up || f.Sent != 4 || f.Confirmed != 4 || f.Failed != 0 || f.Peer != srv.Address() {
		t.Fatalf("forward stats %+v", f)
	}
	if s.EntriesWritten != 4 || s.Creates != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// TestForwardRemoteDownKeepsEntries: with the remote down every entry
// stays in the spool, the target fails as KindRemote naming the peer, and
// the stats say the peer is down; once it is back, one flush writes them
// all, once.
func TestForwardRemoteDownKeepsEntries(t *testing.T) {
	e, srv := newForwardEnv(t)
	srv.Kill()
	var refs []spool.Ref
	for i := range int64(3) {
		refs = append(refs, e.putCG("r", t0+300*i, uint64(300*i), float64(i)))
	}
	if err := e.w.FlushAll(context.Background()); err == nil {
		t.Fatal("flush with the remote down succeeded")
	}
	for _, r := range refs {
		if !e.exists(r) {
			t.Fatalf("segment %v removed while the remote was down", r)
		}
	}
	te := e.w.TargetErrors()
	if len(te) != 1 || te[0].Kind != KindRemote || !strings.Contains(te[0].Err, srv.Address()) || te[0].RetryAt.IsZero() {
		t.Fatalf("target errors %+v; want one KindRemote naming %s, backing off", te, srv.Address())
	}
	s := e.w.Stats()
	if f := s.Forward; f == nil || f.Up || f.Pending != 3 || f.Failed == 0 || !strings.Contains(f.LastError, srv.Address()) {
		t.Fatalf("forward stats with the peer down %+v", f)
	}
	if s.Errors[KindRemote] == 0 {
		t.Fatalf("errors by kind %v", s.ErrorsByKind())
	}
	want := fmt.Sprintf(`# HELP spoold_writer_forward_up 1 when the last exchange with the forward peer succeeded or it answered; 0 when it could not be reached.
# TYPE spoold_writer_forward_up gauge
spoold_writer_forward_up{peer=%q} 0
`, srv.Address())
	if err := testutil.CollectAndCompare(NewCollector(e.w.Stats), strings.NewReader(want), "spoold_writer_forward_up"); err != nil {
		t.Fatal(err)
	}
	srv.Restart()
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatalf("flush after the remote returned: %v", err)
	}
	for _, r := range refs {
		if e.exists(r) {
			t.Fatalf("segment %v kept after the remote confirmed it", r)
		}
	}
	got := testenv.RRDFetch(t, e.remotePath(srv, "r"), t0, t0+600)
	if got[t0+300] != "1 1" || got[t0+600] != "1 2" {
		t.Fatalf("remote rows %v", got)
	}
	if f := e.w.Stats().Forward; !f.Up || f.Confirmed != 3 || f.Pending != 0 {
		t.Fatalf("forward stats after the return %+v", f)
	}
}

// TestForwardReplayAppliesOnce: the forwarder crashed after the remote
// confirmed a batch (its segments are found again), and again after
// sending the next one, which rrdcached acknowledged and queued, before its
// FLUSH: the next writer applies nothing twice and loses nothing.
func TestForwardReplayAppliesOnce(t *testing.T) {
	e, srv := newForwardEnv(t)
	for i := range int64(3) {
		e.putCG("r", t0+300*i, uint64(300*i), float64(i))
	}
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	path := e.remotePath(srv, "r")
	before := testenv.RRDFetch(t, path, t0, t0+600)
	// The crash of the forwarder: its applied segments are back.
	for i := range int64(3) {
		e.putCG("r", t0+300*i, 999, 999)
	}
	// rrdcached acknowledged t0+900 and t0+1200 and holds them queued.
	// (The gauge 7 at t0+900 marks the queued row: the spool's has 3.)
	c, err := rrdcached.NewClient(srv.Address(), rrdcached.DefaultClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Update(context.Background(), "r.rrd", fmt.Sprintf("%d:900:7", t0+900), fmt.Sprintf("%d:1200:4", t0+1200)); err != nil {
		t.Fatal(err)
	}
	fresh := []spool.Ref{e.putCG("r", t0+900, 900, 3), e.putCG("r", t0+1200, 1200, 4), e.putCG("r", t0+1500, 1500, 5)}
	o := e.w.o
	o.RRD = nil // New makes its own forwarder
	w2, err := New(e.sp, e.ix, o)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if err := w2.FlushAll(context.Background()); err != nil {
		t.Fatalf("replay: %v", err)
	}
	// Reading the file's state first (FLUSH, INFO) wrote the queued rows:
	// the spool's entries of those times count as applied.
	s := w2.Stats()
	if s.SkippedAlreadyApplied != 5 || s.EntriesWritten != 1 || s.Quarantined != 0 || s.QueueLength != 0 {
		t.Fatalf("replay stats %+v", s)
	}
	after := testenv.RRDFetch(t, path, t0, t0+1500)
	if after[t0+300] != before[t0+300] || after[t0+600] != before[t0+600] || after[t0+900] != "1 7" || after[t0+1200] != "1 4" || after[t0+1500] != "1 5" {
		t.Fatalf("replay changed or missed rows:\nbefore %v\nafter  %v", before, after)
	}
	for _, r := range fresh {
		if e.exists(r) {
			t.Fatalf("segment %v kept", r)
		}
	}
	// Once more with the file's state cached: rrdcached refuses the row it
	// has queued already (not after its last update), which is no failure
	// since INFO, after the batch's FLUSH, shows it.
	if err := c.Update(context.Background(), "r.rrd", fmt.Sprintf("%d:1800:9", t0+1800)); err != nil {
		t.Fatal(err)
	}
	fresh = []spool.Ref{e.putCG("r", t0+1800, 1800, 6), e.putCG("r", t0+2100, 2100, 7)}
	if err := w2.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if f := w2.Stats().Forward; f.Failed != 0 || f.Sent != 3 || f.Confirmed != 3 {
		t.Fatalf("forward stats %+v; want the refused row confirmed", f)
	}
	after = testenv.RRDFetch(t, path, t0+1500, t0+2100)
	if after[t0+1800] != "1 9" || after[t0+2100] != "1 7" {
		t.Fatalf("rows %v", after)
	}
	for _, r := range fresh {
		if e.exists(r) {
			t.Fatalf("segment %v kept", r)
		}
	}
}

// TestForwardRemoteAheadQuarantines: another client wrote an update two
// hours ahead into the central file. The polls after it, which the central
// rrdcached refuses as not after its last update, are neither counted as
// written nor confirmed: they are quarantined, counted as stale, and the
// target is flagged stale, as the same situation is handled locally; the
// next poll too, without being sent.
func TestForwardRemoteAheadQuarantines(t *testing.T) {
	e, srv := newForwardEnv(t)
	ctx := context.Background()
	for i := range int64(2) {
		e.putCG("r", t0+300*i, uint64(300*i), float64(i))
	}
	if err := e.w.FlushAll(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := rrdcached.NewClient(srv.Address(), rrdcached.DefaultClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ahead := t0 + 300 + 7200
	if err := c.Update(ctx, "r.rrd", fmt.Sprintf("%d:7500:9", ahead)); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(ctx, "r.rrd"); err != nil {
		t.Fatal(err)
	}
	before := e.w.Stats()
	refs := []spool.Ref{e.putCG("r", t0+600, 600, 2), e.putCG("r", t0+900, 900, 3)}
	if err := e.w.FlushAll(ctx); err != nil {
		t.Fatal(err)
	}
	s := e.w.Stats()
	if s.EntriesWritten != before.EntriesWritten || s.Forward.Confirmed != before.Forward.Confirmed {
		t.Errorf("polls refused by the central counted: entries written %d -> %d, confirmed %d -> %d",
			before.EntriesWritten, s.EntriesWritten, before.Forward.Confirmed, s.Forward.Confirmed)
	}
	if s.QuarantinedStale != 2 {
		t.Errorf("quarantined stale %d, want the 2 refused polls", s.QuarantinedStale)
	}
	q := e.quarantined()
	if len(q) != 2 || !strings.Contains(q[0], fmt.Sprintf("before the RRD file's last update %d", ahead)) {
		t.Errorf("quarantined %q; want both polls, saying the central file's last update", q)
	}
	for _, r := range refs {
		if e.exists(r) {
			t.Errorf("segment %v still pending in the spool after it was quarantined", r)
		}
	}
	te := e.w.TargetErrors()
	if len(te) != 1 || te[0].Kind != KindStale || !te[0].RetryAt.IsZero() {
		t.Errorf("target errors %+v; want the target flagged stale, without backoff", te)
	}
	if got := testenv.RRDFetch(t, e.remotePath(srv, "r"), t0+600, t0+900); got[t0+600] == "1 2" || got[t0+900] == "1 3" {
		t.Errorf("the central file holds the refused polls? %v", got)
	}
	sent := s.Forward.Sent
	e.putCG("r", t0+1200, 1200, 4)
	if err := e.w.FlushAll(ctx); err != nil {
		t.Fatal(err)
	}
	if s := e.w.Stats(); s.QuarantinedStale != 3 || s.Forward.Sent != sent || s.EntriesWritten != before.EntriesWritten {
		t.Errorf("the next poll: stale %d (want 3), sent %d -> %d (want none), written %d -> %d",
			s.QuarantinedStale, sent, s.Forward.Sent, before.EntriesWritten, s.EntriesWritten)
	}
}

func TestForwardOptionsRefuseLocalDurability(t *testing.T) {
	o := DefaultOptions()
	o.Dir, o.Forward, o.RRDFsync = t.TempDir(), "unix:/run/x.sock", SyncAlways
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "unix:/run/x.sock") {
		t.Fatalf("Validate = %v; want the fsync refused, naming the peer", err)
	}
	o.RRDFsync, o.RRD = SyncNone, newFake()
	if err := o.Validate(); err == nil {
		t.Fatal("Forward and RRD together validated")
	}
}

// TestNoForwardMetricsWithoutForwarding: a local writer has no forward
// series (and no forward member in its Stats).
func TestNoForwardMetricsWithoutForwarding(t *testing.T) {
	e := newEnv(t, newFake(), nil)
	if s := e.w.Stats(); s.Forward != nil {
		t.Fatalf("local writer's Stats.Forward = %+v", s.Forward)
	}
	n := testutil.CollectAndCount(NewCollector(e.w.Stats), "spoold_writer_forward_up", "spoold_writer_forward_sent_rows_total",
		"spoold_writer_forward_confirmed_rows_total", "spoold_writer_forward_failures_total")
	if n != 0 {
		t.Fatalf("%d forward series from a local writer", n)
	}
}

// newCentral serves a writer over librrd (the central spoold's) with the
// rrdcached backend on a TCP socket of 127.0.0.1 accepting perms ("": the
// default of TCP, read commands only); it returns the central's env and
// the socket's address.
func newCentral(t *testing.T, perms string) (*env, string) {
	t.Helper()
	// The central polls nothing itself: a file of its own targets would be
	// refused to clients (one writer per file).
	c := newLibEnv(t, func(o *Options) { o.Layout = func(string) (rrd.Layout, bool) { return rrd.Layout{}, false } })
	lo := rrdcached.ListenerOptions{Spec: "tcp:127.0.0.1:0"}
	if perms != "" {
		p, err := rrdcached.ParsePermissions(perms)
		if err != nil {
			t.Fatal(err)
		}
		lo.Permissions = p
	}
	so := rrdcached.DefaultOptions()
	so.Dir, so.Listeners = c.dir, []rrdcached.ListenerOptions{lo}
	bo := spoolbackend.DefaultOptions()
	bo.Dir, bo.Now, bo.FutureTolerance = c.dir, c.clock.Now, c.w.o.FutureTolerance
	be, err := spoolbackend.New(c.w, c.sp, c.ix, bo)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := rrdcached.New(so, be, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return c, "tcp:" + srv.Addrs()[0].String()
}

// TestForwardToSpooldLandsOnce: a poller's writer forwards to a central
// spoold (its rrdcached server and backend over real librrd) on TCP with
// the commands forwarding needs: the file is created from the profile,
// every value lands once and exactly, the central spooled and wrote each
// entry once, and a replay of the poller's applied segments (a crash
// before their removal) is skipped.
func TestForwardToSpooldLandsOnce(t *testing.T) {
	central, addr := newCentral(t, "UPDATE,BATCH,FLUSH,CREATE,INFO,PING")
	p := newEnv(t, nil, func(o *Options) { o.Forward, o.ForwardTimeout = addr, 5*time.Second })
	t.Cleanup(func() { p.w.Close() })
	refs := putFourPolls(p, "site/r1")
	if err := p.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err, p.w.TargetErrors())
	}
	checkFourPolls(t, central.rrdPath("site/r1"))
	for _, r := range refs {
		if p.exists(r) {
			t.Fatalf("poller segment %v kept after the central confirmed it", r)
		}
	}
	if cs := central.w.Stats(); cs.EntriesWritten != 4 || cs.QueueLength != 0 {
		t.Fatalf("central writer stats %+v", cs)
	}
	putFourPolls(p, "site/r1") // the replay
	o := p.w.o
	o.RRD = nil
	w2, err := New(p.sp, p.ix, o)
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if err := w2.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := w2.Stats(); s.SkippedAlreadyApplied != 4 || s.Forward.Sent != 0 {
		t.Fatalf("replay stats %+v, forward %+v", s, s.Forward)
	}
	if cs := central.w.Stats(); cs.EntriesWritten != 4 {
		t.Fatalf("central wrote %d entries after the replay, want the 4", cs.EntriesWritten)
	}
}

// TestForwardToSpooldRefusedKeepsEntries: spoold's TCP socket without a
// permission list takes only read commands; the forwarded batch is
// refused, the target backs off with KindPermission naming the peer, and
// the entries stay in the poller's spool.
func TestForwardToSpooldRefusedKeepsEntries(t *testing.T) {
	central, addr := newCentral(t, "")
	testenv.RRDCreate(t, filepath.Join(central.dir, "r.rrd"), t0, 300, "DS:c:COUNTER:600:0:U", "DS:g:GAUGE:600:U:U", "RRA:AVERAGE:0.5:1:100")
	p := newEnv(t, nil, func(o *Options) { o.Forward, o.ForwardTimeout = addr, 5*time.Second })
	t.Cleanup(func() { p.w.Close() })
	ref := p.putCG("r", t0+300, 300, 1)
	if err := p.w.FlushAll(context.Background()); err == nil {
		t.Fatal("a refused forward flushed")
	}
	te := p.w.TargetErrors()
	if len(te) != 1 || te[0].Kind != KindPermission || !strings.Contains(te[0].Err, addr) || !p.exists(ref) {
		t.Fatalf("target errors %+v, entry kept %v", te, p.exists(ref))
	}
	if f := p.w.Stats().Forward; !f.Up || f.Failed == 0 || f.Confirmed != 0 {
		t.Fatalf("forward stats %+v: the peer answers, refusing", f)
	}
}
