package shm

import (
	"sync"
	"time"
	"unsafe"
)

// cacheLine is the padding unit that keeps two shards' locks off one cache
// line (64 bytes on amd64 and most arm64 cores).
const cacheLine = 64

// keyState is one key's pending and in-flight times. Keys live by value in
// their shard's slab (shardState.states), found through the shard's map of
// hash to slot, so a key costs no heap object of its own.
//
// A slot is live iff it has a pending or an in-flight time: a key with
// neither is removed and its slot zeroed and put on the free list.
type keyState struct {
	key      string  // the full key; "" while unknown
	pending  []int64 // ascending, no duplicates, disjoint from inflight
	inflight []int64 // ascending; non-empty iff a batch of the key is in flight
	hash     uint64
	retryAt  int64 // UnixNano until which TakeDue skips the key; 0 = none
	// dueAt is the UnixNano at which the key is due, as TakeDue's due
	// policy last gave it for the oldest pending time and retryAt (fixed
	// for them, see TakeDue); 0 = not known. Whatever changes either sets
	// it to 0 (forget). Until then a TakeDue passes the key over with a
	// comparison instead of asking the policy again.
	dueAt int64
}

// forget drops the key's known due time: its oldest pending time or its
// retry time changed.
func (st *keyState) forget() { st.dueAt = 0 }

func (st *keyState) inFlight() bool { return len(st.inflight) > 0 }

// oldest returns the key's oldest time, pending or in flight, in Unix
// seconds; the key must have one.
func (st *keyState) oldest() int64 {
	switch {
	case !st.inFlight():
		return st.pending[0]
	case len(st.pending) == 0:
		return st.inflight[0]
	}
	return min(st.pending[0], st.inflight[0])
}

// shardState is a shard without its padding. Every field is guarded by mu.
type shardState struct {
	mu     sync.Mutex
	slots  map[uint64]uint32 // hash -> index in states
	states []keyState
	free   []uint32 // indexes of zeroed slots in states
	next   int      // slot where the next limited take starts: round robin
	// wake is the earliest UnixNano at which a key may be due, as the
	// last TakeDue that visited every key saw it; 0 = unknown. Whatever
	// can make a key due sooner (a new oldest time, a Done) brings it
	// forward (wakeFor).
	wake int64

	entries  int // pending + in flight times
	inflight int // in-flight times

	added, duplicates, full, collisions uint64
	taken, applied, requeued            uint64
}

// shard pads shardState to a whole number of cache lines, so that locking
// one shard does not invalidate its neighbours' lines.
type shard struct {
	shardState
	_ [cacheLine - unsafe.Sizeof(shardState{})%cacheLine]byte
}

// lookup returns the state of hash, or nil.
func (s *shard) lookup(hash uint64) (*keyState, uint32) {
	i, ok := s.slots[hash]
	if !ok {
		return nil, 0
	}
	return &s.states[i], i
}

// create returns a fresh slot for hash. The pointer is valid until the next
// create (the slab may move).
func (s *shard) create(hash uint64) *keyState {
	var i uint32
	if n := len(s.free); n > 0 {
		i, s.free = s.free[n-1], s.free[:n-1]
	} else {
		i = uint32(len(s.states))
		s.states = append(s.states, keyState{})
	}
	s.slots[hash] = i
	st := &s.states[i]
	st.hash = hash
	return st
}

// keptTimes is the largest capacity of a times buffer that a freed slot
// keeps for the next key it holds, so that keys written and re-added every
// cycle do not allocate each time. It bounds what free slots hold to 64
// bytes each (unaccounted, like the slab itself, which never shrinks).
const keptTimes = 8

// remove deletes the key in slot i, releasing its key string and times
// (but for one small buffer that the slot keeps; see keptTimes).
func (s *shard) remove(hash uint64, i uint32) {
	delete(s.slots, hash)
	st := &s.states[i]
	*st = keyState{pending: smallBuffer(st.pending, st.inflight)}
	s.free = append(s.free, i)
}

// smallBuffer returns the larger of a and b with a capacity of at most
// keptTimes, emptied, or nil.
func smallBuffer(a, b []int64) []int64 {
	if cap(a) > keptTimes || cap(b) > cap(a) && cap(b) <= keptTimes {
		a = b
	}
	if cap(a) > keptTimes {
		return nil
	}
	return a[:0]
}

// wakeFor brings the shard's wake forward for a key whose oldest pending
// time is now ts (Unix seconds): a ready key is due no sooner than ts plus
// minDelay nanoseconds (Options.MinDelay); with no delay known, at once.
func (s *shardState) wakeFor(ts, minDelay int64) {
	if minDelay <= 0 {
		s.wake = 0
		return
	}
	s.wake = min(s.wake, ts*int64(time.Second)+minDelay)
}
