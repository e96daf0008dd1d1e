package rrdwriter

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/spoold/spoold/spool"
)

// TestRemovalQueueKeepsOrderAndBound: segments handed over in several
// batches are removed in the order handed over (the order a crash between
// removals relies on), a writer that finds the queue full waits until
// removals free room, and wait returns only once all handed over before it
// are removed.
func TestRemovalQueueKeepsOrderAndBound(t *testing.T) {
	var (
		mu      sync.Mutex
		removed []int64
		release = make(chan struct{})
		first   = make(chan struct{})
	)
	q := newRemovals(nil, 1)
	q.max = 3
	q.remove = func(r spool.Ref) {
		if r.Time == 1 {
			close(first)
			<-release // the first removal is slow: the queue fills behind it
		}
		mu.Lock()
		removed = append(removed, r.Time)
		mu.Unlock()
	}
	refs := func(ts ...int64) []spool.Ref {
		var rs []spool.Ref
		for _, t := range ts {
			rs = append(rs, spool.Ref{Hash: 7, Time: t})
		}
		return rs
	}
	q.add(refs(1, 2), "", nil)
	<-first // the goroutine took 1 and 2 and is removing them
	q.add(refs(3), "", nil)
	if n := q.pending(); n != 3 {
		t.Fatalf("pending %d, want 3", n)
	}
	added := make(chan struct{})
	go func() { q.add(refs(4, 5), "", nil); close(added) }() // 3 + 2 > max: waits
	close(release)
	<-added // returns once 1 and 2 are gone
	q.wait()
	mu.Lock()
	defer mu.Unlock()
	if want := []int64{1, 2, 3, 4, 5}; !slices.Equal(removed, want) {
		t.Fatalf("removed %v, want %v", removed, want)
	}
	if n := q.pending(); n != 0 {
		t.Fatalf("pending %d after wait", n)
	}
}

// TestStuckKeyRemovalsWaitBehindIt: once a removal of a key failed, the
// key's later applied segments are recorded behind it untried, and the
// retry removes them in that order and stops at the first failure, so what
// is left on disk always ends with the file's last update.
func TestStuckKeyRemovalsWaitBehindIt(t *testing.T) {
	e := newEnv(t, newFake(), nil)
	a := e.putCG("r", t0, 1, 1)
	b := e.putCG("r", t0+300, 2, 2)
	c := e.putCG("r", t0+600, 3, 3)
	e.w.addStuck(a) // as if a's removal had failed (a read-only spool)
	e.w.rq.add([]spool.Ref{b, c}, "", nil)
	e.w.rq.wait()
	if !e.exists(b) || !e.exists(c) {
		t.Fatal("a later segment of a stuck key was removed before the stuck one")
	}
	var tried []int64
	left := e.w.retryStuckWith(func(r spool.Ref) error {
		tried = append(tried, r.Time)
		if r == b {
			return errors.New("read-only file system")
		}
		return e.sp.Remove(r)
	})
	if left != 1 || !slices.Equal(tried, []int64{a.Time, b.Time}) || !e.exists(c) {
		t.Fatalf("retry tried %v, %d keys left, c on disk %v; want a then b, the key held, c kept", tried, left, e.exists(c))
	}
	if e.w.retryStuck() != 0 || e.exists(b) || e.exists(c) {
		t.Fatal("the retry with a working spool left segments")
	}
}

// TestRemovalLanesRunKeysApart: a key whose removal is slow (a TRIM, a
// stalled disk) holds back the later segments of its own key, in order,
// but not the removals of a key in another lane.
func TestRemovalLanesRunKeysApart(t *testing.T) {
	var (
		mu      sync.Mutex
		removed []spool.Ref
		release = make(chan struct{})
		other   = make(chan struct{})
	)
	q := newRemovals(func(r spool.Ref) {
		if r == (spool.Ref{Hash: 0, Time: 1}) {
			<-release
		}
		mu.Lock()
		removed = append(removed, r)
		mu.Unlock()
		if r.Hash == 1 {
			close(other)
		}
	}, 2)
	q.add([]spool.Ref{{Hash: 0, Time: 1}}, "", nil)
	q.add([]spool.Ref{{Hash: 0, Time: 2}}, "", nil)
	q.add([]spool.Ref{{Hash: 1, Time: 1}}, "", nil)
	select {
	case <-other: // removed while key 0's first removal waits
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("key 1's removal waited behind key 0's")
	}
	close(release)
	q.wait()
	mu.Lock()
	defer mu.Unlock()
	want := []spool.Ref{{Hash: 1, Time: 1}, {Hash: 0, Time: 1}, {Hash: 0, Time: 2}}
	if !slices.Equal(removed, want) {
		t.Fatalf("removed %v, want %v", removed, want)
	}
}

// TestStuckRetriesWaitForEachOther: a retry of the stuck removals that
// comes while another runs waits for it and reports what it left, so a
// FLUSH right after the spool became writable again is not refused
// because the writer's tick was retrying at that moment.
func TestStuckRetriesWaitForEachOther(t *testing.T) {
	e := newEnv(t, newFake(), nil)
	a := e.putCG("r", t0, 1, 1)
	e.w.addStuck(a)
	removing, release := make(chan struct{}), make(chan struct{})
	first, second := make(chan int, 1), make(chan int, 1)
	go func() {
		first <- e.w.retryStuckWith(func(r spool.Ref) error {
			close(removing)
			<-release
			return e.sp.Remove(r)
		})
	}()
	<-removing
	go func() {
		second <- e.w.retryStuckWith(func(spool.Ref) error {
			t.Error("a second retry removed a segment the first was removing")
			return nil
		})
	}()
	select {
	case n := <-second:
		t.Fatalf("the second retry returned %d while the first ran", n)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if n1, n2 := <-first, <-second; n1 != 0 || n2 != 0 || e.exists(a) {
		t.Fatalf("retries left %d and %d keys, segment there %v; want none", n1, n2, e.exists(a))
	}
}
