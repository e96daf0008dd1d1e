package rrdwriter

import (
	"slices"

	"github.com/spoold/spoold/spool"
)

// Stuck segments. A segment whose values are in its RRD file but that
// could not be removed (a read-only or failing spool), or whose file could
// not be made durable (--rrd-fsync always or batch), holds its key: no
// newer entry of the key is written until the removal succeeds. Then the
// segments left on disk after a crash always end with the file's last
// update, which is how the next start knows they were applied
// (splitApplied); writing past them would make them look never applied.
// The writer retries the removals every Tick, and before every flush.
// The stuck segments are the table's (owner.go).
// addStuck records refs (of one key, or of several) whose removal failed
// or waits for a sync, behind the ones of their key recorded before.
func (w *Writer) addStuck(refs ...spool.Ref) {
	w.own(func(tb *table) {
		for _, r := range refs {
			tb.stuck[r.Hash] = append(tb.stuck[r.Hash], r)
		}
	})
}

// isStuck reports whether hash has applied segments left to remove.
func (w *Writer) isStuck(hash uint64) (ok bool) {
	w.own(func(tb *table) { _, ok = tb.stuck[hash] })
	return ok
}

// retryStuckWith tries the stuck removals of each key again with remove,
// in the order they were recorded, and stops at a key's first failure: the
// ones after it stay, so the segments left still end with the newest
// applied. The removals run outside own, on a copy; segments recorded
// meanwhile stay behind them. One retry runs at a time: a second call
// waits for it and returns what it left. It returns how many keys are
// still held.
func (w *Writer) retryStuckWith(remove func(spool.Ref) error) (left int) {
	var (
		todo map[uint64][]spool.Ref
		busy chan struct{}
	)
	w.own(func(tb *table) {
		if left = len(tb.stuck); left == 0 {
			return
		}
		if busy = tb.retrying; busy != nil {
			return
		}
		tb.retrying = make(chan struct{})
		todo = make(map[uint64][]spool.Ref, len(tb.stuck))
		for h, refs := range tb.stuck {
			todo[h] = slices.Clone(refs)
		}
	})
	if busy != nil {
		<-busy
		w.own(func(tb *table) { left = len(tb.stuck) })
		return left
	}
	if todo == nil {
		return left
	}
	removed := make(map[uint64]int, len(todo))
	for h, refs := range todo {
		i := 0
		for i < len(refs) && remove(refs[i]) == nil {
			i++
		}
		removed[h] = i
	}
	w.own(func(tb *table) {
		for h, n := range removed {
			if refs := tb.stuck[h][n:]; len(refs) > 0 {
				tb.stuck[h] = refs
			} else {
				delete(tb.stuck, h)
			}
		}
		close(tb.retrying)
		tb.retrying = nil
		left = len(tb.stuck)
	})
	return left
}

// removeSegment removes an applied segment, or records it as stuck. A
// segment of a key already stuck is recorded behind the others, untried:
// removed before them, it would leave on disk segments that end before the
// file's last update. The segments of one key are removed by one lane of
// the removal stage, in order, so nothing records one of the key stuck
// between the check and the removal.
func (w *Writer) removeSegment(st segmentStore, r spool.Ref) {
	if w.isStuck(r.Hash) {
		w.addStuck(r)
		return
	}
	if err := st.Remove(r); err != nil {
		w.c.removeErrors.Add(1)
		w.addStuck(r)
		w.log.Warn("remove applied spool segment; its target waits until it can be removed", "err", err)
	}
}

// retryStuck retries the removals that failed or waited for a sync,
// after a sync of the RRD file system under a policy other than none; it
// returns the keys still held.
func (w *Writer) retryStuck() int {
	var n int
	w.own(func(tb *table) { n = len(tb.stuck) })
	if n == 0 {
		return 0
	}
	if w.o.RRDFsync != SyncNone && w.syncs.do() != nil {
		return n
	}
	return w.retryStuckWith(w.sp.Remove)
}
