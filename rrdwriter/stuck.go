package rrdwriter

import (
	"sync"
	"sync/atomic"

	"github.com/spoold/spoold/spool"
)

// Stuck segments. A segment whose values are in its RRD file but that
// could not be removed (a read-only or failing spool) holds its key: no
// newer entry of the key is written until the removal succeeds. Then the
// segments left on disk after a crash always end with the file's last
// update, which is how the next start knows they were applied
// (splitApplied); writing past them would make them look never applied.
// The writer retries the removals every Tick, and before every flush.
type stuck struct {
	mu   sync.Mutex
	segs map[uint64][]spool.Ref
	n    atomic.Int64 // len(segs): with none, checks take no lock
}

// add records refs (of one key, or of several) whose removal failed.
func (s *stuck) add(refs ...spool.Ref) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.segs == nil {
		s.segs = make(map[uint64][]spool.Ref)
	}
	for _, r := range refs {
		s.segs[r.Hash] = append(s.segs[r.Hash], r)
	}
	s.n.Store(int64(len(s.segs)))
}

// holds reports whether hash has applied segments left to remove. It may
// be called with an index shard locked.
func (s *stuck) holds(hash uint64) bool {
	if s.n.Load() == 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.segs[hash]
	return ok
}

// keys returns how many keys are held.
func (s *stuck) keys() int { return int(s.n.Load()) }

// retry tries the stuck removals of each key again with remove, in the
// order they were recorded, and stops at a key's first failure: the ones
// after it stay, so the segments left still end with the newest applied.
// It returns how many keys are still held.
func (s *stuck) retry(remove func(spool.Ref) error) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for hash, refs := range s.segs {
		i := 0
		for i < len(refs) && remove(refs[i]) == nil {
			i++
		}
		if i == len(refs) {
			delete(s.segs, hash)
		} else {
			s.segs[hash] = refs[i:]
		}
	}
	s.n.Store(int64(len(s.segs)))
	return len(s.segs)
}

// removeSegment removes an applied segment, or records it as stuck. A
// segment of a key already stuck is recorded behind the others, untried:
// removed before them, it would leave on disk segments that end before the
// file's last update.
func (w *Writer) removeSegment(st segmentStore, r spool.Ref) {
	if w.stuck.holds(r.Hash) {
		w.stuck.add(r)
		return
	}
	if err := st.Remove(r); err != nil {
		w.c.removeErrors.Add(1)
		w.stuck.add(r)
		w.log.Warn("remove applied spool segment; its target waits until it can be removed", "err", err)
	}
}

// retryStuck retries the removals that failed; it returns the keys still
// held.
func (w *Writer) retryStuck() int {
	if w.stuck.keys() == 0 {
		return 0
	}
	return w.stuck.retry(w.sp.Remove)
}
