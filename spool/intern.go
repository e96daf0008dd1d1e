package spool

import "sync"

// dsNames interns data source names: a fleet has a few hundred distinct
// names, and every entry repeats dozens of them, so Decode returns the
// same string instead of allocating one per value (about 40 allocations
// an entry, a tenth of the writer's CPU in garbage collection).
var dsNames = interner{m: make(map[string]string)}

// maxInterned bounds the table; names beyond it are allocated as before.
const maxInterned = 1 << 14

type interner struct {
	mu sync.RWMutex
	m  map[string]string
}

func (in *interner) intern(b []byte) string {
	in.mu.RLock()
	s, ok := in.m[string(b)] // no allocation for the lookup
	in.mu.RUnlock()
	if ok {
		return s
	}
	s = string(b)
	in.mu.Lock()
	if len(in.m) < maxInterned {
		in.m[s] = s
	}
	in.mu.Unlock()
	return s
}
