package rrdwriter

import (
	"sync"

	"github.com/spoold/spoold/spool"
)

// The removal queue. Under RRDFsync none and always, the segments a
// writer applied are handed to a queue served by one goroutine of its own,
// so the writer goes on to its next file while the unlinks run (on a file
// system mounted with online discard, each waits for a TRIM: about a fifth
// of a cached file's update). The queue is a FIFO and its one goroutine
// removes in queue order, so the order the writer chose (newest entries
// last, pass.finish) holds across the batches of a key: what a crash
// leaves on disk is still a suffix that ends with the file's last update,
// which the next start skips as applied (splitApplied).
//
// The index forgets the segments when they are queued (their times are
// settled): nothing offers them again in this process, since a leaf is
// walked once and a new segment of the key cannot take the name of a file
// that is still there (appends create with O_EXCL, publication renames
// without replacing). A removal that fails makes the key stuck (stuck.go),
// and every later segment of a stuck key becomes stuck behind it, untried,
// so the order holds there too.
//
// The queue is bounded (removalQueueMax segments): a writer that finds it
// full waits, so removals that cannot keep up slow the writers instead of
// growing memory. Its goroutine starts when segments are queued and ends
// when the queue is empty; wait waits for the segments queued before it,
// and Run, FlushAll, FlushKey
// and runOnce wait before they return, so none of them returns with
// removals of what it applied still queued.

// removalQueueMax bounds the segments queued or being removed.
const removalQueueMax = 4096

type removals struct {
	remove func(spool.Ref) // removes one segment or records it stuck
	max    int             // removalQueueMax
	mu     sync.Mutex
	cond   sync.Cond // signalled when segments are removed or the goroutine ends
	queue  []spool.Ref
	doing  int  // segments the goroutine took and is removing
	busy   bool // the goroutine runs
	// added and done count the segments queued and removed (or made
	// stuck) since the start.
	added, done uint64
}

func newRemovals(w *Writer) *removals {
	q := &removals{remove: func(r spool.Ref) { w.removeSegment(w.sp, r) }, max: removalQueueMax}
	q.cond.L = &q.mu
	return q
}

// add queues refs, in the order they must be removed, after every segment
// queued before; it waits while the queue is full.
func (q *removals) add(refs []spool.Ref) {
	if len(refs) == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for n := len(q.queue) + q.doing; n > 0 && n+len(refs) > q.max; n = len(q.queue) + q.doing {
		q.cond.Wait()
	}
	q.queue = append(q.queue, refs...)
	q.added += uint64(len(refs))
	if !q.busy {
		q.busy = true
		go q.serve()
	}
}

// serve removes the queued segments in order until the queue is empty.
func (q *removals) serve() {
	q.mu.Lock()
	for len(q.queue) > 0 {
		take := q.queue
		q.queue = nil
		q.doing = len(take)
		q.mu.Unlock()
		for _, r := range take {
			q.remove(r)
		}
		q.mu.Lock()
		q.done += uint64(q.doing)
		q.doing = 0
		q.cond.Broadcast()
	}
	q.busy = false
	q.cond.Broadcast()
	q.mu.Unlock()
}

// wait waits until every segment queued before the call is removed (or
// stuck).
func (q *removals) wait() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for until := q.added; q.done < until; {
		q.cond.Wait()
	}
}

// pending returns how many segments are queued or being removed.
func (q *removals) pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue) + q.doing
}
