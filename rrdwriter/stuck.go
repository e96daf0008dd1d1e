package rrdwriter

import (
	"github.com/spoold/spoold/internal/keyset"
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
type stuck struct {
	segs keyset.Set[[]spool.Ref] // by key hash, in the order recorded
}

// add records refs (of one key, or of several) whose removal failed.
func (s *stuck) add(refs ...spool.Ref) {
	s.segs.Update(func(m map[uint64][]spool.Ref) {
		for _, r := range refs {
			m[r.Hash] = append(m[r.Hash], r)
		}
	})
}

// holds reports whether hash has applied segments left to remove. It may
// be called with an index shard locked.
func (s *stuck) holds(hash uint64) bool {
	_, ok := s.segs.Get(hash)
	return ok
}

// keys returns how many keys are held.
func (s *stuck) keys() int { return s.segs.Len() }

// retry tries the stuck removals of each key again with remove, in the
// order they were recorded, and stops at a key's first failure: the ones
// after it stay, so the segments left still end with the newest applied.
// It returns how many keys are still held.
func (s *stuck) retry(remove func(spool.Ref) error) (left int) {
	s.segs.Update(func(m map[uint64][]spool.Ref) {
		for hash, refs := range m {
			i := 0
			for i < len(refs) && remove(refs[i]) == nil {
				i++
			}
			if i == len(refs) {
				delete(m, hash)
			} else {
				m[hash] = refs[i:]
			}
		}
		left = len(m)
	})
	return left
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

// retryStuck retries the removals that failed or waited for a sync,
// after a sync of the RRD file system under a policy other than none; it
// returns the keys still held.
func (w *Writer) retryStuck() int {
	if w.stuck.keys() == 0 {
		return 0
	}
	if w.o.RRDFsync != SyncNone && w.syncs.do() != nil {
		return w.stuck.keys()
	}
	return w.stuck.retry(w.sp.Remove)
}
