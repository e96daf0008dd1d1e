package rrdwriter

import (
	"errors"
	"maps"
	"slices"

	"github.com/spoold/spoold/spool"
)

// Held keys (rrdcached's SUSPEND). A held key is not written: Run does not
// take it, FlushAll leaves it pending and FlushKey refuses it; its entries
// keep spooling meanwhile, and Release lets the writer at them again.
// Holds last until Release or the end of the process. Writer.held maps
// each held key's hash to the key.

// Hold holds key; it reports false if key was held already.
func (w *Writer) Hold(key string) (added bool) {
	hash := spool.KeyHash(key)
	w.held.Update(func(m map[uint64]string) {
		if _, held := m[hash]; !held {
			m[hash], added = key, true
		}
	})
	return added
}

// Release ends the hold of key; it reports false if key was not held.
func (w *Writer) Release(key string) (released bool) {
	hash := spool.KeyHash(key)
	w.held.Update(func(m map[uint64]string) {
		if _, released = m[hash]; released {
			delete(m, hash)
		}
	})
	return released
}

// ReleaseAll ends every hold and returns how many there were.
func (w *Writer) ReleaseAll() (n int) {
	w.held.Update(func(m map[uint64]string) {
		n = len(m)
		clear(m)
	})
	return n
}

// HeldKeys returns the held keys, sorted.
func (w *Writer) HeldKeys() []string {
	var keys []string
	w.held.Update(func(m map[uint64]string) {
		keys = slices.Collect(maps.Values(m))
	})
	slices.Sort(keys)
	return keys
}

// holds reports whether hash is held. It may be called with an index
// shard locked.
func (w *Writer) holds(hash uint64) bool {
	_, ok := w.held.Get(hash)
	return ok
}

// ErrHeld is wrapped by FlushKey's error for a held key.
var ErrHeld = errors.New("held (suspended): not written until resumed")
