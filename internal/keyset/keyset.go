// Package keyset is a set of keys (the 64-bit hashes of spool keys), each
// with a value, that is checked far more often than it is changed and is
// empty nearly always: the index's held keys, the writer's suspended keys
// and stuck segments. Its size is kept in an atomic, so a look-up in an
// empty set takes no lock, and a look-up may be made with another lock
// held. It starts no goroutines.
package keyset

import (
	"sync"
	"sync/atomic"
)

// Set is a set of keys with a value of type V each, safe for concurrent
// use. The zero value is an empty set.
type Set[V any] struct {
	mu sync.Mutex
	m  map[uint64]V
	n  atomic.Int64 // len(m)
}

// Get returns the value of key and whether the set has key. With the set
// empty it takes no lock (and is small enough to inline).
func (s *Set[V]) Get(key uint64) (V, bool) {
	if s.n.Load() == 0 {
		var zero V
		return zero, false
	}
	return s.get(key)
}

func (s *Set[V]) get(key uint64) (V, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v, ok
}

// Len returns how many keys the set has, without the lock.
func (s *Set[V]) Len() int { return int(s.n.Load()) }

// Update calls fn with the set's map under the set's lock: fn may add,
// change and delete keys (the map is never nil). The size is the map's
// when fn returns.
func (s *Set[V]) Update(fn func(m map[uint64]V)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[uint64]V)
	}
	fn(s.m)
	s.n.Store(int64(len(s.m)))
}
