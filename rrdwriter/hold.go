package rrdwriter

import (
	"errors"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/spoold/spoold/spool"
)

// Held keys (rrdcached's SUSPEND). A held key is not written: Run does not
// take it, FlushAll leaves it pending and FlushKey refuses it; its entries
// keep spooling meanwhile, and Release lets the writer at them again.
// Holds last until Release or the end of the process.
type holds struct {
	mu   sync.Mutex
	keys map[uint64]string
	n    atomic.Int64 // len(keys): with none, checks take no lock
}

// Hold holds key; it reports false if key was held already.
func (w *Writer) Hold(key string) bool {
	h := &w.held
	h.mu.Lock()
	defer h.mu.Unlock()
	hash := spool.KeyHash(key)
	if _, ok := h.keys[hash]; ok {
		return false
	}
	if h.keys == nil {
		h.keys = make(map[uint64]string)
	}
	h.keys[hash] = key
	h.n.Store(int64(len(h.keys)))
	return true
}

// Release ends the hold of key; it reports false if key was not held.
func (w *Writer) Release(key string) bool {
	h := &w.held
	h.mu.Lock()
	defer h.mu.Unlock()
	hash := spool.KeyHash(key)
	if _, ok := h.keys[hash]; !ok {
		return false
	}
	delete(h.keys, hash)
	h.n.Store(int64(len(h.keys)))
	return true
}

// ReleaseAll ends every hold and returns how many there were.
func (w *Writer) ReleaseAll() int {
	h := &w.held
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(h.keys)
	h.keys = nil
	h.n.Store(0)
	return n
}

// HeldKeys returns the held keys, sorted.
func (w *Writer) HeldKeys() []string {
	h := &w.held
	h.mu.Lock()
	defer h.mu.Unlock()
	keys := make([]string, 0, len(h.keys))
	for _, k := range h.keys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// holds reports whether hash is held. It may be called with an index
// shard locked.
func (h *holds) holds(hash uint64) bool {
	if h.n.Load() == 0 {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, ok := h.keys[hash]
	return ok
}

// ErrHeld is wrapped by FlushKey's error for a held key.
var ErrHeld = errors.New("held (suspended): not written until resumed")
