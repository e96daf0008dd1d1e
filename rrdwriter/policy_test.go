package rrdwriter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/spool"
)

func TestDelayAndJitter(t *testing.T) {
	e := newEnv(t, newFake(), func(o *Options) { o.WriteDelay, o.WriteJitter = 10*time.Minute, 5*time.Minute })
	since := time.Unix(t0, 0) // the delay counts from the poll time
	e.putCG("r1", t0, 1, 1)
	j := e.w.jitter(spool.KeyHash("r1"), since)
	if j < 0 || j >= 5*time.Minute {
		t.Fatalf("jitter %s outside [0, 5m)", j)
	}
	due := since.Add(10*time.Minute + j)
	if n := e.w.runOnce(due.Add(-time.Second)); n != 0 {
		t.Fatalf("wrote %d batches a second before due", n)
	}
	if n := e.w.runOnce(due); n != 1 {
		t.Fatalf("wrote %d batches when due, want 1", n)
	}
}

func TestJitterSpreadsTargets(t *testing.T) {
	e := newEnv(t, newFake(), func(o *Options) { o.WriteJitter = 5 * time.Minute })
	since := e.clock.Now()
	seen := make(map[time.Duration]bool)
	for i := range 100 {
		j := e.w.jitter(spool.KeyHash(fmt.Sprint("target-", i)), since)
		if j < 0 || j >= 5*time.Minute {
			t.Fatalf("jitter %s outside [0, 5m)", j)
		}
		seen[j/time.Minute] = true
	}
	if len(seen) != 5 {
		t.Fatalf("jitter of 100 targets fell in %d of 5 minutes", len(seen))
	}
}

func TestWriteRate(t *testing.T) {
	e := newEnv(t, newFake(), func(o *Options) {
		o.WriteDelay, o.WriteJitter, o.WriteRate, o.Writers = 0, 0, 2, 10
	})
	for i := range 6 {
		e.putCG(fmt.Sprint("r", i), t0, 1, 1)
	}
	now := e.clock.Now()
	for _, step := range []struct {
		at   time.Duration
		want int
	}{{0, 2}, {0, 0}, {400 * time.Millisecond, 0}, {500 * time.Millisecond, 1}, {time.Second, 1}, {3 * time.Second, 2}} {
		if n := e.w.runOnce(now.Add(step.at)); n != step.want {
			t.Fatalf("at +%s wrote %d files, want %d", step.at, n, step.want)
		}
	}
}

func TestFlushKeyBypassesDelayAndRate(t *testing.T) {
	f := newFake()
	e := newEnv(t, f, func(o *Options) { o.WriteRate = 0.001 })
	e.w.runOnce(e.clock.Now()) // spends the rate's one start
	ref := e.putCG("r1", t0, 7, 1.5)
	if err := e.w.FlushKey(context.Background(), "r1"); err != nil {
		t.Fatal(err)
	}
	if rows := f.rows(e.rrdPath("r1")); len(rows) != 1 || rows[0].Values[0] != "7" || rows[0].Values[1] != "1.5" {
		t.Fatalf("rows %v", rows)
	}
	if err := e.w.WaitKey(context.Background(), "r1"); err != nil { // FlushKey leaves the removal to the queue
		t.Fatal(err)
	}
	if e.exists(ref) {
		t.Fatal("applied entry not removed")
	}
	if s := e.w.Stats(); s.FlushesPriority != 1 || s.Creates != 1 || s.EntriesPending != 0 {
		t.Fatalf("stats %+v", s)
	}
	if err := e.w.FlushKey(context.Background(), "r1"); err != nil {
		t.Fatalf("flush of nothing: %v", err)
	}
}

func TestBackoffKeepsEntriesAndOthersGoOn(t *testing.T) {
	f := newFake()
	e := newEnv(t, f, func(o *Options) {
		o.WriteDelay, o.WriteJitter, o.BackoffMin, o.BackoffMax = 0, 0, 10*time.Second, 25*time.Second
	})
	bad := e.putCG("bad", t0, 1, 1)
	e.w.runOnce(e.clock.Now()) // create "bad"'s file
	f.setFail(fmt.Errorf("update rrd x: opening 'x': %w", syscall.EACCES))
	bad2 := e.putCG("bad", t0+300, 2, 2)
	_ = bad
	now := e.clock.Now()
	if n := e.w.runOnce(now); n != 1 {
		t.Fatalf("wrote %d", n)
	}
	te := e.w.TargetErrors()
	if len(te) != 1 || te[0].Kind != KindPermission || te[0].Failures != 1 || !te[0].RetryAt.Equal(now.Add(10*time.Second)) {
		t.Fatalf("target errors %+v", te)
	}
	if !e.exists(bad2) {
		t.Fatal("entry of a failing target removed")
	}
	f.setFail(nil)
	good := e.putCG("good", t0, 1, 1)
	if n := e.w.runOnce(now.Add(9 * time.Second)); n != 1 || e.exists(good) {
		t.Fatalf("other target not written during backoff (%d batches)", n)
	}
	f.setFail(fmt.Errorf("update rrd x: %w", syscall.ENOSPC))
	e.clock.Set(now.Add(10 * time.Second))
	if n := e.w.runOnce(e.clock.Now()); n != 1 {
		t.Fatalf("backed-off target not retried at its retry time (%d)", n)
	}
	te = e.w.TargetErrors()
	if te[0].Kind != KindNoSpace || te[0].Failures != 2 || !te[0].RetryAt.Equal(e.clock.Now().Add(20*time.Second)) {
		t.Fatalf("second failure %+v", te)
	}
	e.clock.Advance(20 * time.Second)
	e.w.runOnce(e.clock.Now())
	if te = e.w.TargetErrors(); te[0].Failures != 3 || !te[0].RetryAt.Equal(e.clock.Now().Add(25*time.Second)) {
		t.Fatalf("backoff not capped at BackoffMax: %+v", te)
	}
	f.setFail(nil)
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(e.w.TargetErrors()) != 0 || e.exists(bad2) {
		t.Fatal("recovered target still failing or entry not removed")
	}
	s := e.w.Stats()
	if s.Errors[KindPermission] != 1 || s.Errors[KindNoSpace] != 2 || s.Backoffs != 3 || s.QueueLength != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestFlushAllGivesUpOnFailingTargets(t *testing.T) {
	f := newFake()
	e := newEnv(t, f, nil)
	e.putCG("a", t0, 1, 1)
	e.putCG("b", t0, 1, 1)
	f.setFail(errors.New("some librrd failure"))
	err := e.w.FlushAll(context.Background())
	if err == nil || !strings.Contains(err.Error(), "2 targets failed") {
		t.Fatalf("flush all: %v", err)
	}
	if s := e.w.Stats(); s.EntriesPending != 2 || s.InFlight != 0 || s.Errors[KindCorrupt] != 2 {
		t.Fatalf("stats %+v", s)
	}
}

func TestRejectedRowIsQuarantinedOthersLand(t *testing.T) {
	f := newFake()
	e := newEnv(t, f, nil)
	f.reject = func(_ string, r rrd.Sample) bool { return r.Time == t0+600 }
	var refs []spool.Ref
	for i := range int64(5) {
		refs = append(refs, e.putCG("r", t0+300*i, uint64(i), 0))
	}
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	var times []int64
	for _, r := range f.rows(e.rrdPath("r")) {
		times = append(times, r.Time)
	}
	if fmt.Sprint(times) != fmt.Sprint([]int64{t0, t0 + 300, t0 + 900, t0 + 1200}) {
		t.Fatalf("rows landed at %v", times)
	}
	for _, r := range refs {
		if e.exists(r) {
			t.Fatalf("entry %s left in the spool", r)
		}
	}
	q := e.quarantined()
	if len(q) != 1 || !strings.Contains(q[0], "not a simple unsigned integer") || !strings.Contains(q[0], fmt.Sprint(t0+600)) {
		t.Fatalf("quarantine reasons %q", q)
	}
	if s := e.w.Stats(); s.UpdateCalls != 2 || s.EntriesWritten != 4 || s.Quarantined != 1 || len(e.w.TargetErrors()) != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestStaleLastUpdateRetriesWithoutQuarantine(t *testing.T) {
	f := newFake()
	e := newEnv(t, f, nil)
	e.putCG("r", t0, 1, 1)
	e.w.FlushAll(context.Background())
	// Another writer advanced the file behind our cache.
	f.mu.Lock()
	f.files[e.rrdPath("r")].info.Last = t0 + 300
	f.mu.Unlock()
	old := e.putCG("r", t0+300, 2, 2)
	fresh := e.putCG("r", t0+600, 3, 3)
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e.exists(old) || e.exists(fresh) || len(e.quarantined()) != 0 {
		t.Fatal("stale cache: entries left or quarantined")
	}
	if rows := f.rows(e.rrdPath("r")); rows[len(rows)-1].Time != t0+600 {
		t.Fatalf("rows %v", rows)
	}
}

func TestProfileMismatchKeepsEntries(t *testing.T) {
	f := newFake()
	e := newEnv(t, f, nil)
	path := e.rrdPath("r")
	p := testLayout()
	p.DS[1].Name = "other"
	if err := f.Create(path, p, t0-300); err != nil {
		t.Fatal(err)
	}
	ref := e.putCG("r", t0, 1, 1)
	e.w.FlushAll(context.Background())
	te := e.w.TargetErrors()
	if len(te) != 1 || te[0].Kind != KindMismatch || !e.exists(ref) || f.updateCalls() != 0 {
		t.Fatalf("mismatch: errors %+v, entry kept %v, update calls %d", te, e.exists(ref), f.updateCalls())
	}
}

func TestNoProfile(t *testing.T) {
	e := newEnv(t, newFake(), func(o *Options) { o.Layout = nil })
	ref := e.putCG("r", t0, 1, 1)
	e.w.FlushAll(context.Background())
	if te := e.w.TargetErrors(); len(te) != 1 || te[0].Kind != KindNoProfile || !e.exists(ref) {
		t.Fatalf("target errors %+v", te)
	}
}

func TestDiscontinuityWritesUnknownCounters(t *testing.T) {
	f := newFake()
	e := newEnv(t, f, nil)
	e.putCG("r", t0, 100, 1)
	e.put("r", t0+300, spool.FlagDiscontinuity, cnt("c", 5), gauge("g", 2))
	e.put("r", t0+600, 0, spool.Value{Name: "c", Type: spool.Unknown}, gauge("g", 1e-300))
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(f.rows(e.rrdPath("r")))
	want := fmt.Sprint([]rrd.Sample{{Time: t0, Values: []string{"100", "1"}}, {Time: t0 + 300, Values: []string{"U", "2"}}, {Time: t0 + 600, Values: []string{"U", "1e-300"}}})
	if got != want {
		t.Fatalf("rows\n got %s\nwant %s", got, want)
	}
}

func TestSpoolProblemsSettle(t *testing.T) {
	f := newFake()
	e := newEnv(t, f, nil)
	e.putCG("r", t0, 1, 1)
	corrupt := e.putCG("r", t0+300, 2, 2)
	if err := os.WriteFile(e.sp.EntryPath(corrupt), []byte("garbage"), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ix.Add(corrupt.Hash, "r", t0+600); err != nil { // indexed, never written
		t.Fatal(err)
	}
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := e.w.Stats()
	if s.Vanished != 1 || s.Quarantined != 1 || s.EntriesWritten != 1 || s.QueueLength != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestUnknownKeyIsLearned(t *testing.T) {
	f := newFake()
	e := newEnv(t, f, nil)
	ent := spool.Entry{Key: "learned", Time: t0, Values: []spool.Value{cnt("c", 1)}}
	ref, err := e.sp.Write(&ent)
	if err != nil {
		t.Fatal(err)
	}
	e.ix.Add(ref.Hash, "", t0) // as the loader does
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(f.rows(e.rrdPath("learned"))) != 1 {
		t.Fatal("entry of a key known only by hash not written")
	}
}

func TestRunWritesAndStops(t *testing.T) {
	f := newFake()
	e := newEnv(t, f, func(o *Options) { o.WriteDelay, o.WriteJitter, o.Tick = 0, 0, time.Millisecond })
	ref := e.putCG("r", t0, 1, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- e.w.Run(ctx) }()
	// FlushKey waits for the batch Run may be writing, so afterwards the
	// entry is applied whoever wrote it.
	if err := e.flush("r"); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if e.exists(ref) || len(f.rows(e.rrdPath("r"))) != 1 {
		t.Fatal("entry not written exactly once")
	}
}

// TestFlushKeyAnswersBeforeTheRemoval: FlushKey returns once the file
// holds the entry, while its segment's removal is still held up; WaitKey
// returns only after the removal, and a FlushKey meanwhile waits for it
// too (no pass reads a segment applied but still on disk).
func TestFlushKeyAnswersBeforeTheRemoval(t *testing.T) {
	f := newFake()
	e := newEnv(t, f, nil)
	ref := e.putCG("r1", t0, 7, 1.5)
	remove := e.w.rq.remove
	release, removed := make(chan struct{}), make(chan struct{})
	e.w.rq.remove = func(r spool.Ref) {
		<-release
		remove(r)
		close(removed)
	}
	ctx := context.Background()
	if err := e.w.FlushKey(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if rows := f.rows(e.rrdPath("r1")); len(rows) != 1 || !e.exists(ref) {
		t.Fatalf("after FlushKey: rows %v, segment there %v; want the row written, the segment not removed yet", rows, e.exists(ref))
	}
	waited := make(chan error, 2)
	go func() { waited <- e.w.WaitKey(ctx, "r1") }()
	go func() { waited <- e.w.FlushKey(ctx, "r1") }()
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := e.w.WaitKey(short, "r1"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitKey during the removal = %v, want it to wait (until its context ends)", err)
	}
	close(release)
	for range 2 {
		if err := <-waited; err != nil {
			t.Fatal(err)
		}
	}
	<-removed
	if e.exists(ref) || f.updateCalls() != 1 {
		t.Fatalf("segment there %v, update calls %d; want it removed and one update", e.exists(ref), f.updateCalls())
	}
}

// cancelOnUpdate is a fake RRD whose updates end a context: a flush's
// time runs out during its first file.
type cancelOnUpdate struct {
	*fakeRRD
	cancel context.CancelFunc
}

func (c cancelOnUpdate) Update(path string, template []string, rows []rrd.Sample, opened func(fd int)) error {
	c.cancel()
	return c.fakeRRD.Update(path, template, rows, opened)
}

// TestFlushAllEndsWithItsContext: a flush whose context ends with files
// still to write (the shutdown flush's timeout) returns its context's
// error at once, leaving them pending, instead of taking them again and
// again (the daemon spun so on SIGTERM, its timeout passed); a later
// flush writes them, each once.
func TestFlushAllEndsWithItsContext(t *testing.T) {
	for _, during := range []bool{false, true} {
		t.Run(fmt.Sprintf("during=%v", during), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var r RRD = newFake()
			if during {
				r = cancelOnUpdate{r.(*fakeRRD), cancel}
			} else {
				cancel()
			}
			e := newEnv(t, r, func(o *Options) { o.Writers = 1 })
			for i := range 20 {
				e.putCG(fmt.Sprint("r", i), t0, 1, 1)
			}
			done := make(chan error, 1)
			go func() { done <- e.w.FlushAll(ctx) }()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("FlushAll after its context ended: %v, want context.Canceled", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("FlushAll did not return within 30s of its context's end")
			}
			// Written: none if the context had ended; during the
			// flush, the file being written and the one whose writer
			// had started.
			if n := e.w.Stats().EntriesWritten; during && (n < 1 || n > 2) || !during && n != 0 {
				t.Fatalf("after the cut flush: %d written", n)
			}
			if err := e.w.FlushAll(context.Background()); err != nil {
				t.Fatal(err)
			}
			if s := e.w.Stats(); s.EntriesWritten != 20 || s.EntriesPending != 0 {
				t.Fatalf("after a second flush: %d written, %d pending; want 20, 0", s.EntriesWritten, s.EntriesPending)
			}
		})
	}
}
