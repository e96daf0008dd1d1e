package shm

import (
	"math"

	"github.com/spoold/spoold/internal/keyset"
)

// Held keys. When the index is full, Add refuses an entry: it stays on
// disk, unindexed, until a walk of the spool finds it. Writing a newer
// entry of its key first would be wrong: the RRD file's last update would
// pass the refused one, and the writer would later skip it as already
// applied. So a refused Add of (key, t) holds the key at t:
//
//   - no time at or after t of the key is handed out (TakeDue, TakeAll,
//     TakeKey take only the times before it), and the key's pending times
//     at or after t leave the index (they are on disk too; this frees the
//     room they took, so the index never fills with times nobody may take);
//   - until the next walk begins, Add refuses the key's times at or after
//     t as well: the walk will index them after the older ones.
//
// A walk (BeginWalk … EndWalk) indexes what was refused before it began:
// during the walk those bounds still limit takes, but not Adds; when the
// walk has ended they are dropped. Refusals during the walk hold the key
// again, from then on.
type held struct {
	keys keyset.Set[hold] // with none held, checks take no lock
}

type hold struct {
	cur int64 // oldest refused since the walk in progress (or the last one) began; none: math.MaxInt64
	old int64 // oldest refused before that; dropped when the walk ends
}

// hold records a refused Add of (hash, ts). It may be called with a shard
// locked.
func (h *held) hold(hash uint64, ts int64) {
	h.keys.Update(func(m map[uint64]hold) {
		k, ok := m[hash]
		if !ok {
			k = hold{cur: ts, old: math.MaxInt64}
		}
		k.cur = min(k.cur, ts)
		m[hash] = k
	})
}

// bound returns the first time of hash that may not be taken
// (math.MaxInt64 if it is not held). It may be called with a shard locked.
func (h *held) bound(hash uint64) int64 {
	if k, ok := h.keys.Get(hash); ok {
		return min(k.cur, k.old)
	}
	return math.MaxInt64
}

// refuses reports whether an Add of (hash, ts) must be refused: the key
// was refused at or before ts since the current walk (if any) began.
func (h *held) refuses(hash uint64, ts int64) bool {
	k, ok := h.keys.Get(hash)
	return ok && ts >= k.cur
}

// BeginWalk marks the start of a walk of the whole spool (and lowers the
// overflow flag, as ClearOverflow does): the walk will index what was
// refused before it, so Adds of held keys are accepted again; their
// bounds still limit takes until EndWalk.
func (ix *Index) BeginWalk() {
	ix.overflow.Store(false)
	ix.held.keys.Update(func(m map[uint64]hold) {
		for hash, k := range m {
			m[hash] = hold{old: min(k.old, k.cur), cur: math.MaxInt64}
		}
	})
}

// EndWalk marks the end of a complete walk begun by BeginWalk: the bounds
// of refusals before it are dropped, and keys not refused during it are
// released. Call it only when the walk visited the whole spool.
func (ix *Index) EndWalk() {
	ix.held.keys.Update(func(m map[uint64]hold) {
		for hash, k := range m {
			if k.cur == math.MaxInt64 {
				delete(m, hash)
			} else {
				m[hash] = hold{cur: k.cur, old: math.MaxInt64}
			}
		}
	})
}

// dropFrom removes the pending times of st at or after ts (they stay on
// disk, for a walk) and returns the bytes freed; the caller removes the
// key if it is left with nothing. The shard is locked.
func (s *shard) dropFrom(st *keyState, ts int64) int64 {
	i := 0
	for i < len(st.pending) && st.pending[i] < ts {
		i++
	}
	n := len(st.pending) - i
	st.pending = st.pending[:i]
	if i == 0 {
		st.forget()
	}
	s.entries -= n
	return int64(n) * timeBytes
}

// RoomAgain reports whether the index refused entries (Overflowed) and
// has drained below 90% of Options.MaxBytes since: room for a rescan to
// index them without refusing at once again.
func (ix *Index) RoomAgain() bool {
	st := ix.Stats()
	return ix.Overflowed() && st.Bytes < st.MaxBytes/10*9
}
