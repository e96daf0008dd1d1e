package loader

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/spool"
)

// Leaf readiness. Every segment of a key lives in one leaf directory, so a
// key is complete in the index, and may be written, as soon as the first
// walk has indexed its leaf: writing it earlier could apply a newer entry
// before an older one still unindexed, and the older one would then look
// applied. The first walk claims each leaf before it walks it and marks it
// done after; EnsureLeaf walks a leaf the walk has not reached yet at once,
// outside the throttle (a graph or a flush of that key), and the walk then
// skips it. Leaves the walk passed without finding them (no directory)
// are ready too. Once a first walk has finished, every key is ready for
// good: later walks (rescans) index what was dropped in or refused by a
// full index, and the index's held keys keep those in order.
type readiness struct {
	layout  spool.Levels
	claimed []atomic.Uint64 // bit per leaf: a walk of it has begun
	done    []atomic.Uint64 // bit per leaf: walked
	pos     atomic.Int64    // leaves below this index were passed by the first walk
	all     atomic.Bool     // the first walk has finished
	nDone   atomic.Int64    // leaves walked or passed

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when a leaf is done
}

func newReadiness(l spool.Levels) *readiness {
	words := (l.LeafDirs() + 63) / 64
	return &readiness{layout: l, claimed: make([]atomic.Uint64, words), done: make([]atomic.Uint64, words),
		changed: make(chan struct{})}
}

func bit(set []atomic.Uint64, i int) bool { return set[i/64].Load()&(1<<(i%64)) != 0 }

// claim sets the claimed bit of leaf i and reports whether it was clear.
func (r *readiness) claim(i int) bool {
	w, m := &r.claimed[i/64], uint64(1)<<(i%64)
	for {
		old := w.Load()
		if old&m != 0 {
			return false
		}
		if w.CompareAndSwap(old, old|m) {
			return true
		}
	}
}

// finish marks leaf i done and wakes the waiters.
func (r *readiness) finish(i int) {
	r.done[i/64].Or(1 << (i % 64))
	r.nDone.Add(1)
	r.wake()
}

// release gives leaf i back unwalked (its walk was cancelled) and wakes the
// waiters, one of which may claim it.
func (r *readiness) release(i int) {
	r.claimed[i/64].And(^uint64(1 << (i % 64)))
	r.wake()
}

func (r *readiness) wake() {
	r.mu.Lock()
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// pass records that the first walk is past every leaf below i.
func (r *readiness) pass(i int) {
	for old := r.pos.Load(); int64(i) > old; old = r.pos.Load() {
		if r.pos.CompareAndSwap(old, int64(i)) {
			return
		}
	}
}

func (r *readiness) ready(i int) bool {
	return r.all.Load() || bit(r.done, i) || int64(i) < r.pos.Load() && !bit(r.claimed, i)
}

func (r *readiness) wait() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

// Ready reports whether the key of hash is complete in the index: the
// first walk has indexed (or passed) its leaf directory, or EnsureLeaf did.
// It is cheap (two atomic loads) and safe from any goroutine.
func (l *Loader) Ready(hash uint64) bool {
	return l.ready.ready(l.ready.layout.LeafIndex(hash))
}

// WalkedAll reports whether a first walk of the whole spool has finished.
func (l *Loader) WalkedAll() bool { return l.ready.all.Load() }

// EnsureLeaf makes the key of hash ready: if the first walk has not indexed
// its leaf directory yet, EnsureLeaf walks that leaf now, unthrottled, on
// the caller's goroutine (or waits while another walk of it finishes). It
// returns ctx's error if ctx ends first.
func (l *Loader) EnsureLeaf(ctx context.Context, hash uint64) error {
	return l.ensureLeaf(ctx, l.ready.layout.LeafIndex(hash))
}

// ensureLeaf makes leaf i ready, walking it if no other walk has claimed
// it, waiting otherwise (and walking it if that walk gives it back).
func (l *Loader) ensureLeaf(ctx context.Context, i int) error {
	r := l.ready
	for !r.ready(i) {
		if r.claim(i) {
			l.walkOneLeaf(ctx, i)
			if ctx.Err() != nil {
				r.release(i)
				break
			}
			r.finish(i)
			l.c.leavesOnDemand.Add(1)
			return nil
		}
		ch := r.wait()
		if r.ready(i) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
	}
	if err := ctx.Err(); err != nil && !r.ready(i) {
		return fmt.Errorf("walk spool directory %s: %w", r.layout.LeafDir(i), err)
	}
	return nil
}

// onDemandWalk returns a walk for EnsureLeaf or EnsureAll: no throttle, no
// progress, the counters of the current walk.
func (l *Loader) onDemandWalk(ctx context.Context) *walk {
	w := &walk{l: l, ctx: ctx, done: ctx.Done(), layout: l.sp.Levels(), dr: spool.NewDirReader(), onDemand: true}
	w.dr.ForceUnknown = l.forceUnknown
	return w
}

// EnsureAll makes every key ready now: it walks, unthrottled and on the
// caller's goroutine, every leaf directory the first walk has not reached,
// waits for leaves another walk is in, and then counts the spool as walked
// (WalkedAll). A flush of everything calls it, and so does a shutdown.
func (l *Loader) EnsureAll(ctx context.Context) error {
	r := l.ready
	if r.all.Load() {
		return nil
	}
	w := l.onDemandWalk(ctx)
	if err := l.sp.WalkTree(w.tree(), w); err != nil {
		return fmt.Errorf("walk spool %s: %w", l.sp.Dir(), err)
	}
	for _, i := range w.others {
		if err := l.ensureLeaf(ctx, i); err != nil {
			return err
		}
	}
	r.pass(r.layout.LeafDirs())
	r.all.Store(true)
	return nil
}

// walkOneLeaf indexes leaf directory i, claimed by the caller, without
// throttle or progress. Problems are counted and logged, as in a walk.
func (l *Loader) walkOneLeaf(ctx context.Context, i int) {
	w := l.onDemandWalk(ctx)
	dir := w.layout.LeafDir(i)
	for d, name := range strings.Split(dir, "/") {
		w.levels[d] = name
	}
	fd, err := l.sp.OpenLeafDir(i)
	if errors.Is(err, fs.ErrNotExist) {
		return // no directory: nothing spooled there
	}
	if err != nil {
		w.problem("walk a leaf on demand", err)
		return
	}
	defer unix.Close(fd)
	_ = w.walkLeaf(fd, i) // only a cancellation, which the caller sees
}

// Warmup is the warm-up as /status shows it.
type Warmup struct {
	// LeavesDone of LeavesTotal leaf directories are ready (walked, passed
	// or walked on demand); OnDemand of them by EnsureLeaf.
	LeavesDone  int    `json:"leaves_ready"`
	LeavesTotal int    `json:"leaves_total"`
	OnDemand    uint64 `json:"leaves_walked_on_demand"`
	// All is true once a first walk has finished: every key is ready.
	All bool `json:"complete"`
}

// Warmup returns the warm-up's state.
func (l *Loader) Warmup() Warmup {
	r := l.ready
	rd := Warmup{LeavesTotal: r.layout.LeafDirs(), OnDemand: l.c.leavesOnDemand.Load(), All: r.all.Load()}
	if rd.All {
		rd.LeavesDone = rd.LeavesTotal
	} else {
		rd.LeavesDone = int(min(int64(rd.LeavesTotal), r.pos.Load()+r.nDone.Load()-r.doneBelow()))
	}
	return rd
}

// doneBelow counts the done leaves below pos (already counted by pos).
func (r *readiness) doneBelow() int64 {
	pos := int(r.pos.Load())
	n := 0
	for i := 0; i < pos/64; i++ {
		n += bits.OnesCount64(r.done[i].Load())
	}
	if rest := pos % 64; rest > 0 {
		n += bits.OnesCount64(r.done[pos/64].Load() & (1<<rest - 1))
	}
	return int64(n)
}
