package shm

import "unsafe"

// Byte accounting. The index charges every key and entry a fixed price and
// checks the sum exactly against Options.MaxBytes:
//
//	key:   keyOverhead + len(key)   (len(key) once the key is known)
//	entry: timeBytes                (one pending or in-flight time)
//
// keyOverhead is the key's slab slot (a keyState: 96 bytes on 64-bit
// platforms) plus mapEntryBytes for its entry in the shard's map. Measured
// with BenchmarkIndexMemory (100,000 keys of 10 entries), the heap is about
// 1.2x the accounted bytes (26 MiB for 22): the rest is the slack of growing
// slices (times, slab) and maps, which the accounting leaves out so that the
// price of an Add does not depend on slice capacities. The slab does not
// shrink when keys leave; its slots are reused by the next keys.
const (
	// mapEntryBytes is a map entry (uint64 hash -> uint32 slot): a 16-byte
	// swiss-table slot and its control byte at a load of 7/8, rounded up
	// for the table's growth.
	mapEntryBytes = 32
	// keyOverhead is what a key costs besides its name and times.
	keyOverhead = int64(unsafe.Sizeof(keyState{})) + mapEntryBytes
	// timeBytes is what one pending or in-flight time costs.
	timeBytes = 8
)

// reserve takes n bytes from the budget, or reports false and takes nothing
// if that would exceed it.
func (ix *Index) reserve(n int64) bool {
	for {
		cur := ix.bytes.Load()
		if cur+n > ix.maxBytes {
			return false
		}
		if ix.bytes.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}

// release gives n bytes back to the budget.
func (ix *Index) release(n int64) {
	if n != 0 {
		ix.bytes.Add(-n)
	}
}
