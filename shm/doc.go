// Package shm owns the in-memory index of pending spool segments: for every
// key (an RRD file's target) the names (first poll times) of its segments
// that are on disk but not yet in the RRD file, which of them a writer has
// taken (in flight), and until when the key backs off after a failed write.
// The oldest pending time is what the writer's delay counts from.
//
// The index is a power-of-two number of shards, each with its own mutex and
// padded to a cache line, so that the poller, the loader, the writer and the
// admin API do not queue on one lock. A key's shard is chosen from a
// multiplicative mix of its whole xxhash64, so entries of one spool directory
// (which share the hash's low bits) spread over all shards.
//
// The index is bounded by a byte budget (Options.MaxBytes) and never evicts:
// when an Add does not fit, it fails with ErrFull, the entry stays on disk and
// Overflowed tells the daemon to rescan later. Nothing here touches the disk.
//
// Package shm starts no goroutines. An *Index is safe for concurrent use.
package shm
