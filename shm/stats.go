package shm

import "time"

// Stats describe an Index. Counts are summed over the shards, each read
// under its lock, so they are consistent per shard but not one snapshot.
type Stats struct {
	Shards int `json:"shards"`
	// Keys are the keys present; Entries their times, pending and in
	// flight; InFlight the times taken and not yet Done.
	Keys     int `json:"keys"`
	Entries  int `json:"entries"`
	InFlight int `json:"in_flight"`
	// Backoff is the number of keys whose retry time is after now.
	Backoff int `json:"backoff_keys"`
	// Bytes are the accounted bytes: per key 120 + len(key), per pending segment 8
	// (see bytes.go); MaxBytes is the capacity (Options.MaxBytes).
	Bytes    int64 `json:"bytes"`
	MaxBytes int64 `json:"capacity_bytes"`
	// Counters since New: entries Added; Duplicates, Adds of an entry
	// already pending or in flight; Full, Adds and SetKeys refused with
	// ErrFull; Collisions, refused with ErrCollision; Taken, times handed
	// out in batches; Applied, times Done removed; Requeued, times Done put
	// back to pending.
	Added      uint64 `json:"added"`
	Duplicates uint64 `json:"duplicates"`
	Full       uint64 `json:"full"`
	Collisions uint64 `json:"collisions"`
	Taken      uint64 `json:"taken"`
	Applied    uint64 `json:"applied"`
	Requeued   uint64 `json:"requeued"`
	// Held are the keys with a refused entry on disk: none of their times
	// from it on is taken until a walk has indexed it (see held.go).
	Held int `json:"held_keys"`
	// OldestPending is the oldest poll time still in the index (pending or
	// in flight); zero if the index is empty.
	OldestPending time.Time `json:"oldest_pending"`
}

// Stats returns the index's state and counters. It visits every key (about
// a millisecond per 100,000 keys), so it is meant for the admin API and
// metrics, not for a hot path.
func (ix *Index) Stats() Stats {
	st := Stats{Shards: len(ix.shards), MaxBytes: ix.maxBytes, Held: ix.held.keys.Len()}
	now := ix.now().UnixNano()
	oldest, have := int64(0), false
	for i := range ix.shards {
		s := &ix.shards[i]
		s.mu.Lock()
		st.Keys += len(s.slots)
		st.Entries += s.entries
		st.InFlight += s.inflight
		st.Added += s.added
		st.Duplicates += s.duplicates
		st.Full += s.full
		st.Collisions += s.collisions
		st.Taken += s.taken
		st.Applied += s.applied
		st.Requeued += s.requeued
		for j := range s.states {
			k := &s.states[j]
			if len(k.pending) == 0 && !k.inFlight() {
				continue // free slot
			}
			if k.retryAt > now {
				st.Backoff++
			}
			if o := k.oldest(); !have || o < oldest {
				oldest, have = o, true
			}
		}
		s.mu.Unlock()
	}
	st.Bytes = ix.bytes.Load()
	if have {
		st.OldestPending = time.Unix(oldest, 0)
	}
	return st
}
