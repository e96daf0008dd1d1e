package spool

import (
	"sync"
	"sync/atomic"
)

// The memory of appended segments. The bytes this process wrote to a
// segment, each write(2) of them complete, are kept in memory as they are
// written, so that the writer reads a segment it seals from here instead
// of opening and reading the file back (readSegment). They are the file's
// bytes: only this process appends to a segment, and only while it is
// open. The memory is a cache, never the truth: the file is written
// before an append returns, the entries read from memory are parsed and
// checked as a file's are, and after a crash the spool is read from disk.
//
// Options.MemoryBytes bounds it (the capacity of every buffer kept). A
// segment whose next append would pass the bound is forgotten and read
// from disk; so is one whose write failed (its file may hold torn bytes
// for the reader to quarantine). A segment leaves the memory when it is
// read, removed or quarantined, and when a new segment takes its name.

// memory holds the bytes of the closed segments not read yet, by name,
// and counts those of the open segments (openSegment.mem) too.
type memory struct {
	max  int64
	used atomic.Int64 // capacity of every buffer kept, open segments' too
	mu   sync.Mutex
	segs map[Ref][]byte
}

// grow returns mem, the bytes kept of a segment (nil for a new one), with
// buf appended, or nil (and mem's bytes given back) if the bound does not
// allow it. A segment forgotten once is not kept again: pass first only
// for a new segment's first write.
func (m *memory) grow(mem, buf []byte, first bool) []byte {
	if m.max <= 0 || mem == nil && !first {
		return nil
	}
	if n := len(mem) + len(buf); n > cap(mem) {
		if n > exactBytes { // a long segment: doubled
			n = max(n, 2*len(mem))
		} else { // exact for up to three entries of one size, then by half
			n = max(n, len(mem)+len(mem)/2)
		}
		grown := make([]byte, len(mem), n)
		copy(grown, mem)
		if m.used.Add(int64(cap(grown)-cap(mem))) > m.max {
			m.used.Add(-int64(cap(grown)))
			return nil
		}
		mem = grown
	}
	return append(mem, buf...)
}

// exactBytes is the size up to which a segment's buffer grows by half:
// the few entries of a key between two writes of its file (up to three of
// one size) take no more memory than their bytes, and a segment that takes
// many appends (a protocol client's) grows its buffer a few times only.
const exactBytes = 4 << 10

// release gives back mem's bytes: a segment forgotten.
func (m *memory) release(mem []byte) {
	if mem != nil {
		m.used.Add(-int64(cap(mem)))
	}
}

// keep holds mem, the bytes of the segment r just closed, until it is read.
func (m *memory) keep(r Ref, mem []byte) {
	if mem == nil {
		return
	}
	m.mu.Lock()
	if m.segs == nil {
		m.segs = make(map[Ref][]byte)
	}
	old := m.segs[r]
	m.segs[r] = mem
	m.mu.Unlock()
	m.release(old)
}

// take returns the bytes of segment r, if kept, and forgets them; the
// caller releases them once copied.
func (m *memory) take(r Ref) ([]byte, bool) {
	m.mu.Lock()
	mem, ok := m.segs[r]
	delete(m.segs, r)
	m.mu.Unlock()
	return mem, ok
}

// drop forgets segment r: removed, quarantined, or its name taken anew.
func (m *memory) drop(r Ref) {
	if mem, ok := m.take(r); ok {
		m.release(mem)
	}
}
