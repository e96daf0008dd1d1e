package rrdwriter

import (
	"sync"

	"github.com/spoold/spoold/spool"
)

// The table of every key's write state, and its one owner.
//
// What the writer knows of a key between two writes of its file is in one
// table: the batch in flight (taken from the index, not ended), the last
// error and its backoff, a hold (SUSPEND), the applied segments that wait
// for their removal (stuck), and the rate at which files start. A
// function handed to Writer.own runs with the table, alone: that is the
// only way to read or change it, and no other lock guards any of it.
// Nothing run by own waits for I/O or calls own again: the workers (Run's
// file goroutines, FlushKey's and FlushAll's callers, the removal lanes)
// read the spool, update the file and remove the segments outside, and
// report back through own. The index (package shm) keeps each key's
// pending times and backoff under its own shard locks; the writer's take
// (TakeDue, TakeKey, TakeAll) and its end (Done) run inside own, so that a
// key is taken and registered in flight, or ended and forgotten, at once.
//
// Other state, and who owns it:
//   - fileState (filestate.go): the file's cached header, under its file
//     lock (fileState.mu), held by the one goroutine doing I/O on the file;
//     the map of them is the filesMu's.
//   - the removal stage's lanes (removal.go): their queues, under the
//     queue's lock; the sync group (durable.go): its counters.
//   - counters (stats.go): atomics, written by whoever counts.

// table is the write state of every key; see own.
type table struct {
	inflight map[uint64]chan struct{} // closed when the batch ends
	errs     map[uint64]TargetError   // the last error of each key failing now
	held     map[uint64]string        // keys not to write (SUSPEND): hold.go
	stuck    map[uint64][]spool.Ref   // applied segments not removed yet: stuck.go
	retrying chan struct{}            // a retry of the stuck removals runs: closed when it ends
	lim      limiter                  // file starts (Options.WriteRate)
}

// owner is the table and the lock that makes a function handed to own its
// one owner while it runs.
type owner struct {
	mu  sync.Mutex
	tab table
}

func newOwner(rate float64) *owner {
	return &owner{tab: table{
		inflight: make(map[uint64]chan struct{}),
		errs:     make(map[uint64]TargetError),
		held:     make(map[uint64]string),
		stuck:    make(map[uint64][]spool.Ref),
		lim:      newLimiter(rate),
	}}
}

// own runs f with the table of every key's write state; f must not wait
// for I/O nor call own.
func (w *Writer) own(f func(*table)) {
	w.keys.mu.Lock()
	defer w.keys.mu.Unlock()
	f(&w.keys.tab)
}

// blocked reports whether the key of hash may not be written now: held
// (SUSPEND) or stuck behind an applied segment not removed yet.
func (tb *table) blocked(hash uint64) bool {
	if _, ok := tb.held[hash]; ok {
		return true
	}
	_, ok := tb.stuck[hash]
	return ok
}
