package shm

// Reading the index without taking anything: what rrdcached's PENDING and
// QUEUE show of the keys of its protocol.

// Peek returns hash's key ("" if not known yet) and its pending and
// in-flight times, ascending, as a Batch that is the caller's; ok is false
// when the index holds nothing of hash. Nothing is taken.
func (ix *Index) Peek(hash uint64) (b Batch, ok bool) {
	s := ix.shardOf(hash)
	s.mu.Lock()
	defer s.mu.Unlock()
	st, _ := s.lookup(hash)
	if st == nil {
		return Batch{}, false
	}
	return st.peek(), true
}

// PeekKeys returns, as Peek does, every key the index holds for which keep
// returns true (keep("") is asked of keys whose key is not known yet). keep
// is called with a shard locked: it must be cheap.
func (ix *Index) PeekKeys(keep func(key string) bool) []Batch {
	var out []Batch
	for i := range ix.shards {
		s := &ix.shards[i]
		s.mu.Lock()
		for j := range s.states {
			st := &s.states[j]
			if len(st.pending) == 0 && !st.inFlight() || !keep(st.key) {
				continue // a free slot, or not asked for
			}
			out = append(out, st.peek())
		}
		s.mu.Unlock()
	}
	return out
}

// peek copies the key's state; its shard is locked.
func (st *keyState) peek() Batch {
	times := append(make([]int64, 0, len(st.pending)+len(st.inflight)), st.inflight...)
	return Batch{Hash: st.hash, Key: st.key, Times: mergeTimes(times, st.pending)}
}
