//go:build cgo

package rrdwriter

import (
	"context"
	"testing"

	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/spool"
)

// TestRRDFsyncBatchRemovesOnlyAfterASync: with RRDFsync batch an applied
// entry stays in the spool, counted as pending removal, until one syncfs
// of the RRD file system covers it; then it is removed. FlushAll (the
// shutdown flush) leaves nothing pending.
func TestRRDFsyncBatchRemovesOnlyAfterASync(t *testing.T) {
	e := newLibEnv(t, func(o *Options) { o.RRDFsync = SyncBatch })
	var refs []spool.Ref
	for i := range int64(3) {
		refs = append(refs, e.putCG("a", t0+300*i, uint64(600*i), float64(i)))
	}
	e.clock.Advance(e.w.o.WriteDelay + e.w.o.WriteJitter)
	if n := e.w.runOnce(e.clock.Now()); n != 1 {
		t.Fatalf("runOnce wrote %d batches, want 1", n)
	}
	if last, _ := testenv.RRDLastUpdate(t, e.rrdPath("a")); last != t0+600 {
		t.Fatalf("last update %d, want %d: the values are in the file", last, t0+600)
	}
	for _, r := range refs {
		if !e.exists(r) {
			t.Fatalf("entry %s removed before a sync covered its file", r)
		}
	}
	if s := e.w.Stats(); s.RemovalsPending != 3 || s.RRDSyncs != 0 || s.EntriesPending != 0 {
		t.Fatalf("before the sync: %+v", s)
	}
	// More entries of another target, then the shutdown flush.
	b := e.putCG("b", t0, 1, 1)
	if err := e.w.FlushAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, r := range append(refs, b) {
		if e.exists(r) {
			t.Fatalf("entry %s left after FlushAll", r)
		}
	}
	if s := e.w.Stats(); s.RemovalsPending != 0 || s.RRDSyncs != 1 || s.RRDSyncErrors != 0 || s.RemoveErrors != 0 {
		t.Fatalf("after FlushAll: %+v (one sync for both targets)", s)
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
