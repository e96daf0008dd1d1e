package shm

import (
	"math"
	"time"
)

// A Batch is all pending times of one key, taken at once. While it is in
// flight, its times count as indexed (Add of them is a duplicate) and no
// other batch of the key is handed out; Done ends it.
type Batch struct {
	Hash uint64
	// Key is the key, or "" if not yet known.
	Key string
	// Times are the poll times, ascending, without duplicates; the first
	// is the one the write delay counts from. They are the caller's: the
	// index keeps its own copy.
	Times []int64
}

// TakeDue appends to dst, and returns, up to most batches of keys that have
// pending times, are not in flight, are not backing off (retry time after
// now), and whose due(hash, since) is not after now, where since is the
// key's oldest pending time (a time after now counts as now: it is due at
// once, for the writer to deal with). The taken times become
// in flight until Done. due is the writer's delay and jitter policy; it is
// called with a shard locked, so it must be fast and must not call the index.
// Keys are visited round robin (shards and the keys within them), so that
// most does not favour some keys. It allocates only the batches' times (a few
// arrays per call) and dst's growth.
//
// A due time at or after NotReady says the key is not ready for a reason
// the index does not see (its leaf is not walked, the writer holds it): it
// is asked again at the next TakeDue. Any other due time is taken as fixed
// for the key's oldest pending time: the key keeps it, and later visits
// pass it over with a comparison until then, without asking due again. A
// shard whose whole visit found nothing due is not visited again until the
// earliest due time it saw, or until an Add or Done gives one of its keys
// a new oldest time (with Options.MinDelay, not before that time may be
// due): a TakeDue costs the keys that may be due, not every key pending.
func (ix *Index) TakeDue(now time.Time, due func(hash uint64, since time.Time) time.Time, most int, dst []Batch) []Batch {
	if most <= 0 {
		return dst
	}
	want := len(dst) + most
	nowSec, nowNano := now.Unix(), now.UnixNano()
	// at is when st is due: 0 if now, -1 if TakeDue must ask again.
	at := func(st *keyState) int64 {
		since := min(st.pending[0], nowSec) // a time ahead of the clock counts as now
		d := due(st.hash, time.Unix(since, 0))
		switch {
		case !d.Before(NotReady):
			return -1
		case st.retryAt <= nowNano && !d.After(now):
			return 0
		case since < st.pending[0]: // due by now's rule, which moves with now
			return -1
		}
		return max(st.retryAt, d.UnixNano())
	}
	var arena timesArena
	start := ix.cursor.Add(1)
	for i := range uint64(len(ix.shards)) {
		s := &ix.shards[(start+i)&uint64(len(ix.shards)-1)]
		if dst = s.takeDue(at, nowNano, want, dst, &arena, &ix.held); len(dst) >= want {
			break
		}
	}
	return dst
}

// NotReady is the earliest due time that TakeDue reads as "not ready,
// ask again" (see TakeDue).
var NotReady = time.Unix(1<<62, 0)

// TakeAll appends to dst, and returns, a batch of every key that has pending
// times and is not in flight, regardless of due time and backoff (the
// shutdown flush).
func (ix *Index) TakeAll(dst []Batch) []Batch {
	var arena timesArena
	for i := range ix.shards {
		dst = ix.shards[i].takeAll(dst, &arena, &ix.held)
	}
	return dst
}

// TakeKey takes all pending times of hash regardless of due time and
// backoff (the flush before a graph is drawn). ok is false if the key has
// nothing pending or a batch of it is already in flight.
func (ix *Index) TakeKey(hash uint64) (b Batch, ok bool) {
	s := ix.shardOf(hash)
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _ := s.lookup(hash)
	if st == nil || len(st.pending) == 0 || st.inFlight() {
		return Batch{}, false
	}
	var arena timesArena
	return s.takeKey(st, &arena, ix.held.bound(hash))
}

// takeDue appends batches of the shard's keys that have pending times, are
// not in flight, are due by at (0) and are not held (see held.go) until dst
// has want batches. It resumes where the previous one stopped, so that no
// key waits behind others that are taken again and again. A visit of every
// key that took none of them due leaves the earliest time one may be due in
// s.wake, and until then the shard is passed over.
func (s *shard) takeDue(at func(*keyState) int64, now int64, want int, dst []Batch, arena *timesArena, h *held) []Batch {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now < s.wake {
		return dst
	}
	wake := int64(math.MaxInt64)
	n, start := len(s.states), s.next
	k := 0
	for ; k < n && len(dst) != want; k++ {
		i := (start + k) % n
		st := &s.states[i]
		if len(st.pending) == 0 || st.inFlight() {
			continue
		}
		if st.dueAt > now {
			wake = min(wake, st.dueAt)
			continue
		}
		switch t := at(st); {
		case t < 0:
			wake = 0
			continue
		case t > 0:
			st.dueAt = t
			wake = min(wake, t)
			continue
		}
		b, ok := s.takeKey(st, arena, h.bound(st.hash))
		if !ok {
			wake = 0 // due, and held back by a bound that may lift: ask again
			continue
		}
		dst = append(dst, b)
		s.next = i + 1
	}
	if k < n { // stopped early: the keys not visited may be due
		wake = 0
	}
	s.wake = wake
	return dst
}

// takeAll appends a batch of every key of the shard that has pending times
// and is not in flight, as far as held bounds allow.
func (s *shard) takeAll(dst []Batch, arena *timesArena, h *held) []Batch {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.states {
		st := &s.states[i]
		if len(st.pending) == 0 || st.inFlight() {
			continue
		}
		if b, ok := s.takeKey(st, arena, h.bound(st.hash)); ok {
			dst = append(dst, b)
		}
	}
	return dst
}

// takeKey moves the pending times of st before bound (see held.go) in
// flight and returns them as a batch; ok is false if there are none. The
// key's backoff ends.
func (s *shard) takeKey(st *keyState, arena *timesArena, bound int64) (b Batch, ok bool) {
	n := len(st.pending)
	for n > 0 && st.pending[n-1] >= bound {
		n--
	}
	if n == 0 {
		return Batch{}, false
	}
	b = Batch{Hash: st.hash, Key: st.key, Times: arena.copyOf(st.pending[:n])}
	if n == len(st.pending) {
		st.inflight, st.pending = st.pending, st.inflight[:0]
	} else { // the times from bound on stay pending (rare: a held key)
		st.inflight = append(st.inflight[:0], st.pending[:n]...)
		st.pending = st.pending[:copy(st.pending, st.pending[n:])]
	}
	st.retryAt = 0
	st.forget()
	s.inflight += len(st.inflight)
	s.taken += uint64(len(st.inflight))
	return b, true
}

// Done ends the in-flight batch of hash. The in-flight times that are in
// applied leave the index (they are in the RRD file or otherwise settled);
// every other in-flight time goes back to pending.
// Times in applied that are not in flight are ignored, and so is a Done for
// a key with no batch in flight. If retryAt is not zero, TakeDue skips the
// key until then. A key with nothing left is removed and its bytes freed.
func (ix *Index) Done(hash uint64, applied []int64, retryAt time.Time) {
	s := ix.shardOf(hash)
	s.mu.Lock()
	freed := s.done(hash, applied, retryAt, ix.minDelay)
	s.mu.Unlock()
	ix.release(freed)
}

// done is Done with the shard locked; it returns the bytes freed.
func (s *shard) done(hash uint64, applied []int64, retryAt time.Time, minDelay int64) int64 {
	st, slot := s.lookup(hash)
	if st == nil || !st.inFlight() {
		return 0
	}
	flown := len(st.inflight)
	left := removeApplied(st.inflight, applied)
	nApplied := flown - len(left)
	s.inflight -= flown
	s.entries -= nApplied
	s.applied += uint64(nApplied)
	s.requeued += uint64(len(left))
	if len(left) > 0 {
		st.pending = mergeTimes(st.pending, left)
	}
	st.inflight = st.inflight[:0]
	if !retryAt.IsZero() {
		st.retryAt = retryAt.UnixNano()
	}
	st.forget()
	freed := int64(nApplied) * timeBytes
	if len(st.pending) > 0 {
		// Times are pending again: due no sooner than the oldest's delay
		// (a retry time only puts it later).
		s.wakeFor(st.pending[0], minDelay)
	} else {
		freed += keyOverhead + int64(len(st.key))
		s.remove(hash, slot)
	}
	return freed
}
