//go:build cgo

package rrdwriter

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/spool"
)

// TestRRDFsyncBatchRemovesOnlyAfterASync: with RRDFsync batch an applied
// entry stays in the spool, counted as pending removal, until a syncfs of
// the RRD file system that started after its update ended; the files
// applied while one sync runs share the next (a group commit: one lane
// here, so they are queued behind the first file's).
func TestRRDFsyncBatchRemovesOnlyAfterASync(t *testing.T) {
	e := newLibEnv(t, func(o *Options) { o.RRDFsync, o.Writers = SyncBatch, 1 })
	syncing, release := make(chan struct{}, 8), make(chan struct{})
	syncfs := e.w.syncs.sync
	e.w.syncs.sync = func() error {
		syncing <- struct{}{}
		<-release
		return syncfs()
	}
	var refs []spool.Ref
	for i := range int64(3) {
		refs = append(refs, e.putCG("a", t0+300*i, uint64(600*i), float64(i)))
	}
	ctx := context.Background()
	if err := e.w.FlushKey(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	<-syncing // a's removal waits for this sync
	if last, _ := testenv.RRDLastUpdate(t, e.rrdPath("a")); last != t0+600 {
		t.Fatalf("last update %d, want %d: the values are in the file", last, t0+600)
	}
	// Two more files applied while the sync runs: they wait for the next.
	for _, key := range []string{"b", "c"} {
		refs = append(refs, e.putCG(key, t0, 1, 1))
		if err := e.w.FlushKey(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range refs {
		if !e.exists(r) {
			t.Fatalf("entry %s removed before a sync covered its file", r)
		}
	}
	if s := e.w.Stats(); s.RemovalsPending != 5 || s.RRDSyncs != 0 {
		t.Fatalf("during the sync: %+v; want 5 removals pending, no sync ended", s)
	}
	close(release)
	e.w.WaitRemovals()
	for _, r := range refs {
		if e.exists(r) {
			t.Fatalf("entry %s left after the syncs", r)
		}
	}
	if err := e.w.FlushAll(ctx); err != nil {
		t.Fatal(err)
	}
	if s := e.w.Stats(); s.RemovalsPending != 0 || s.RRDSyncs != 2 || s.RRDSyncErrors != 0 || s.RemoveErrors != 0 {
		t.Fatalf("after FlushAll: %+v; want 2 syncs (a's, then one for b and c)", s)
	}
}

// TestEveryPolicyEndsABatchAfterItsRemoval: under each RRD fsync policy a
// batch ends only once its file is durable as the policy asks and its
// segments are removed. A walk of the spool that indexes the applied
// segments again meanwhile (the loader does at a start or a rescan) and a
// FlushKey that comes meanwhile apply nothing twice: one update, nothing
// quarantined, nothing left pending.
func TestEveryPolicyEndsABatchAfterItsRemoval(t *testing.T) {
	for _, policy := range []SyncPolicy{SyncNone, SyncAlways, SyncBatch} {
		t.Run(policy.String(), func(t *testing.T) {
			e := newLibEnv(t, func(o *Options) { o.RRDFsync = policy })
			var refs []spool.Ref
			for i := range int64(3) {
				refs = append(refs, e.putCG("a", t0+300*i, uint64(600*i), float64(i)))
			}
			remove, release := e.w.rq.remove, make(chan struct{})
			e.w.rq.remove = func(r spool.Ref) {
				<-release
				remove(r)
			}
			ctx := context.Background()
			if err := e.w.FlushKey(ctx, "a"); err != nil {
				t.Fatal(err)
			}
			for _, r := range refs { // the rescan
				if _, err := e.ix.Add(r.Hash, "a", r.Time); err != nil {
					t.Fatal(err)
				}
			}
			short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			if err := e.w.WaitKey(short, "a"); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("WaitKey before the removal = %v; want it to wait: the batch has not ended", err)
			}
			again := make(chan error, 1)
			go func() { again <- e.w.FlushKey(ctx, "a") }()
			close(release)
			if err := <-again; err != nil {
				t.Fatal(err)
			}
			if err := e.w.FlushAll(ctx); err != nil {
				t.Fatal(err)
			}
			for _, r := range refs {
				if e.exists(r) {
					t.Fatalf("entry %s left", r)
				}
			}
			syncs := map[SyncPolicy]uint64{SyncNone: 0, SyncAlways: 1, SyncBatch: 1}[policy]
			s := e.w.Stats()
			if s.UpdateCalls != 1 || s.EntriesPending != 0 || s.RRDSyncs != syncs || len(e.quarantined()) != 0 {
				t.Fatalf("stats %+v, quarantined %v; want one update, nothing pending or quarantined, %d syncs", s, e.quarantined(), syncs)
			}
			if last, _ := testenv.RRDLastUpdate(t, e.rrdPath("a")); last != t0+600 {
				t.Fatalf("last update %d, want %d", last, t0+600)
			}
		})
	}
}

// TestUnsyncedSegmentsHoldTheirKey: a batch whose file could not be made
// durable keeps its segments and holds its key (FlushKey refuses it, a
// newer entry waits); the retry syncs again before it removes them.
func TestUnsyncedSegmentsHoldTheirKey(t *testing.T) {
	e := newLibEnv(t, func(o *Options) { o.RRDFsync = SyncBatch })
	failing := true
	syncfs := e.w.syncs.sync
	e.w.syncs.sync = func() error {
		if failing {
			return errors.New("input/output error")
		}
		return syncfs()
	}
	a := e.putCG("a", t0, 1, 1)
	ctx := context.Background()
	if err := e.w.FlushKey(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	e.w.WaitRemovals()
	b := e.putCG("a", t0+300, 2, 2)
	if err := e.w.FlushKey(ctx, "a"); err == nil || !e.exists(a) || !e.exists(b) {
		t.Fatalf("FlushKey of a key whose applied segment is not synced = %v; a there %v, b there %v; want it refused, both kept", err, e.exists(a), e.exists(b))
	}
	if s := e.w.Stats(); s.RRDSyncErrors == 0 || s.UpdateCalls != 1 {
		t.Fatalf("stats %+v: want the sync error counted and b not written", s)
	}
	failing = false
	if err := e.w.FlushKey(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	e.w.WaitRemovals()
	if e.exists(a) || e.exists(b) {
		t.Fatal("segments left once a sync succeeded")
	}
	if last, _ := testenv.RRDLastUpdate(t, e.rrdPath("a")); last != t0+300 {
		t.Fatalf("last update %d, want %d", last, t0+300)
	}
}

// TestRRDFsyncAlwaysSyncsEachFile: with RRDFsync always each update is
// followed by a sync of its file, and its entries are removed at once.
func TestRRDFsyncAlwaysSyncsEachFile(t *testing.T) {
	e := newLibEnv(t, func(o *Options) { o.RRDFsync = SyncAlways })
	var refs []spool.Ref
	for _, key := range []string{"a", "b"} {
		for i := range int64(2) {
			refs = append(refs, e.putCG(key, t0+300*i, uint64(600*i), 1))
		}
	}
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		if e.exists(r) {
			t.Fatalf("entry %s left", r)
		}
	}
	if s := e.w.Stats(); s.RRDSyncs != 2 || s.UpdateCalls != 2 || s.RemovalsPending != 0 {
		t.Fatalf("stats %+v: want one sync per updated file", s)
	}
}
