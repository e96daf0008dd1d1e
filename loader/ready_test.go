package loader

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/spoold/spoold/spool"
)

// pausedWalk starts a throttled walk (one file per iteration) of a spool
// holding two segments of each of n keys, and returns once the walk has
// paused in its first sleep; resume lets it go on, done closes when Run
// returned.
func pausedWalk(t *testing.T, n int) (l *Loader, ix *fakeIndex, sp *spool.Spool, resume func(), done <-chan error) {
	t.Helper()
	sp = openSpool(t, "1:2")
	putEntries(t, sp, n, 1000)
	putEntries(t, sp, n, 2000)
	ix = newFakeIndex()
	clock := newFakeClock()
	paused, release := make(chan struct{}), make(chan struct{})
	first := true
	clock.onSleep = func(time.Duration) {
		if first {
			first = false
			close(paused)
			<-release
		}
	}
	l = newTestLoader(t, sp, ix, Params{Files: 1, Sleep: time.Second, Threshold: MaxThreshold}, clock)
	errc := make(chan error, 1)
	go func() { _, err := l.Run(context.Background()); errc <- err }()
	<-paused
	var once bool
	resume = func() {
		if !once {
			once = true
			close(release)
		}
	}
	t.Cleanup(resume)
	return l, ix, sp, resume, errc
}

// keysByLeaf returns the hashes of dev-0..dev-n-1 ordered by leaf index.
func keysByLeaf(sp *spool.Spool, n int) []uint64 {
	var hs []uint64
	for i := range n {
		hs = append(hs, spool.KeyHash(fmt.Sprintf("dev-%d", i)))
	}
	slices.SortFunc(hs, func(a, b uint64) int { return sp.Levels().LeafIndex(a) - sp.Levels().LeafIndex(b) })
	return hs
}

// TestEnsureLeafDuringAThrottledWalk: while the first walk is paused in
// its first leaf, a key of a leaf it has not reached is not ready; EnsureLeaf
// walks that leaf at once and indexes both of its segments; the key of the
// leaf the walk is in stays not ready (half indexed) until the walk is done
// with it; the walk then skips the leaf walked on demand.
func TestEnsureLeafDuringAThrottledWalk(t *testing.T) {
	const n = 40
	l, ix, sp, resume, done := pausedWalk(t, n)
	hs := keysByLeaf(sp, n)
	firstKey, lastKey := hs[0], hs[n-1]
	if l.Ready(firstKey) || l.Ready(lastKey) || l.WalkedAll() {
		t.Fatalf("ready before their leaves were walked: first %v last %v all %v", l.Ready(firstKey), l.Ready(lastKey), l.WalkedAll())
	}
	if err := l.EnsureLeaf(context.Background(), lastKey); err != nil {
		t.Fatal(err)
	}
	ix.mu.Lock()
	got := ix.refs[spool.Ref{Hash: lastKey, Time: 1000}] && ix.refs[spool.Ref{Hash: lastKey, Time: 2000}]
	ix.mu.Unlock()
	if !got || !l.Ready(lastKey) {
		t.Fatalf("after EnsureLeaf: indexed %v, ready %v", got, l.Ready(lastKey))
	}
	if l.Ready(firstKey) {
		t.Fatal("the key of the leaf the walk is paused in is ready with one of its two segments indexed")
	}
	if rd := l.Warmup(); rd.OnDemand != 1 || rd.All || rd.LeavesDone < 1 || rd.LeavesTotal != 4096 {
		t.Fatalf("warm-up %+v", rd)
	}
	resume()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !l.WalkedAll() || !l.Ready(firstKey) || ix.Len() != 2*n {
		t.Fatalf("after the walk: all %v, first ready %v, indexed %d of %d", l.WalkedAll(), l.Ready(firstKey), ix.Len(), 2*n)
	}
	if st := l.Stats(); st.Indexed+st.Existing != 2*n {
		t.Fatalf("the walk indexed %d and found %d existing; want %d in all (the leaf walked on demand is skipped)", st.Indexed, st.Existing, 2*n)
	}
}

// TestEnsureAllDuringAThrottledWalk: EnsureAll walks everything left at
// once, waits for the leaf the paused walk holds, and then every key is
// ready; a cancelled EnsureAll returns its context's error.
func TestEnsureAllDuringAThrottledWalk(t *testing.T) {
	const n = 40
	l, ix, _, resume, done := pausedWalk(t, n)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.EnsureAll(ctx); err == nil || l.WalkedAll() {
		t.Fatalf("EnsureAll with a cancelled context = %v, walked all %v", err, l.WalkedAll())
	}
	errc := make(chan error, 1)
	go func() { errc <- l.EnsureAll(context.Background()) }()
	// EnsureAll indexes every leaf but the one the paused walk holds, then
	// waits for it.
	for ix.Len() < 2*n-2 {
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-errc:
		t.Fatalf("EnsureAll returned %v while a leaf was still being walked", err)
	default:
	}
	resume()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if !l.WalkedAll() || ix.Len() != 2*n {
		t.Fatalf("after EnsureAll: all %v, indexed %d of %d", l.WalkedAll(), ix.Len(), 2*n)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestCancelledWalkGivesItsLeafBack: a first walk cancelled inside a leaf
// leaves it not ready and claimable; EnsureLeaf then walks it.
func TestCancelledWalkGivesItsLeafBack(t *testing.T) {
	sp := openSpool(t, "1:2")
	putEntries(t, sp, 10, 1000)
	putEntries(t, sp, 10, 2000)
	ix := newFakeIndex()
	clock := newFakeClock()
	ctx, cancel := context.WithCancel(context.Background())
	clock.onSleep = func(time.Duration) { cancel() }
	l := newTestLoader(t, sp, ix, Params{Files: 1, Sleep: time.Second, Threshold: MaxThreshold}, clock)
	if _, err := l.Run(ctx); err == nil {
		t.Fatal("Run of a cancelled walk returned nil")
	}
	first := keysByLeaf(sp, 10)[0]
	if l.Ready(first) {
		t.Fatal("the leaf of a cancelled walk is ready")
	}
	if err := l.EnsureLeaf(context.Background(), first); err != nil || !l.Ready(first) {
		t.Fatalf("EnsureLeaf after the cancel: %v, ready %v", err, l.Ready(first))
	}
}
