package shm

import (
	"sync"
	"sync/atomic"
)

// Held keys. When the index is full, Add refuses an entry: it stays on
// disk, unindexed, until a walk of the spool finds it. Writing any other
// entry of its key before that would be wrong when the refused entry is
// the older one: the RRD file's last update would pass it, and the writer
// would then skip it as already applied. So a refused Add holds its key:
// no batch of it is taken (TakeDue, TakeAll, TakeKey) until a complete
// walk that started after the refusal has ended (BeginWalk, EndWalk)
// without refusing it again.
type held struct {
	mu   sync.Mutex
	keys map[uint64]uint64 // hash → walk generation of its last refusal
	gen  uint64
	n    atomic.Int64 // len(keys): with none held, isHeld takes no lock
}

// hold records a refused Add of hash. It may be called with a shard locked.
func (h *held) hold(hash uint64) {
	h.mu.Lock()
	if h.keys == nil {
		h.keys = make(map[uint64]uint64)
	}
	h.keys[hash] = h.gen
	h.n.Store(int64(len(h.keys)))
	h.mu.Unlock()
}

// isHeld reports whether hash is held. It may be called with a shard
// locked; with nothing held it takes no lock.
func (h *held) isHeld(hash uint64) bool {
	if h.n.Load() == 0 {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.keys[hash]
	return ok
}

// BeginWalk marks the start of a walk of the whole spool (and lowers the
// overflow flag, as ClearOverflow does): keys refused before it are
// released by EndWalk, since the walk indexes their entries.
func (ix *Index) BeginWalk() {
	ix.overflow.Store(false)
	ix.held.mu.Lock()
	ix.held.gen++
	ix.held.mu.Unlock()
}

// EndWalk marks the end of a complete walk begun by BeginWalk: keys last
// refused before that walk began are released. Call it only when the walk
// visited the whole spool.
func (ix *Index) EndWalk() {
	h := &ix.held
	h.mu.Lock()
	for hash, g := range h.keys {
		if g < h.gen {
			delete(h.keys, hash)
		}
	}
	h.n.Store(int64(len(h.keys)))
	h.mu.Unlock()
}
