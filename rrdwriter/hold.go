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
// Holds last until Release or the end of the process. The table's held
// maps each held key's hash to the key (owner.go).

// Hold holds key; it reports false if key was held already.
func (w *Writer) Hold(key string) (added bool) {
	hash := spool.KeyHash(key)
	w.own(func(tb *table) {
		if _, held := tb.held[hash]; !held {
			tb.held[hash], added = key, true
		}
	})
	return added
}

// Release ends the hold of key; it reports false if key was not held.
func (w *Writer) Release(key string) (released bool) {
	hash := spool.KeyHash(key)
	w.own(func(tb *table) {
		if _, released = tb.held[hash]; released {
			delete(tb.held, hash)
		}
	})
	return released
}

// ReleaseAll ends every hold and returns how many there were.
func (w *Writer) ReleaseAll() (n int) {
	w.own(func(tb *table) {
		n = len(tb.held)
		clear(tb.held)
	})
	return n
}

// HeldKeys returns the held keys, sorted.
func (w *Writer) HeldKeys() []string {
	var keys []string
	w.own(func(tb *table) { keys = slices.Collect(maps.Values(tb.held)) })
	slices.Sort(keys)
	return keys
}

// isHeld reports whether hash is held (SUSPEND).
func (w *Writer) isHeld(hash uint64) (ok bool) {
	w.own(func(tb *table) { _, ok = tb.held[hash] })
	return ok
}

// ErrHeld is wrapped by FlushKey's error for a held key.
var ErrHeld = errors.New("held (suspended): not written until resumed")
