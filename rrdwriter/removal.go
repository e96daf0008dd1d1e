package rrdwriter

import (
	"sync"

	"github.com/spoold/spoold/spool"
)

// The removal stage. Every batch ends here, whatever the RRD fsync
// policy: the segments a writer applied are handed to a queue served by
// goroutines of its own, which first make the RRD files durable as
// Options.RRDFsync asks (none: nothing; always: fdatasync each file;
// batch: one syncfs shared by every group waiting meanwhile, durable.go),
// then remove the segments, then end the batch. The writer goes on to its
// next file meanwhile (on a file system mounted with online discard, each
// unlink waits for a TRIM: longer than a cached file's update, so one
// goroutine of unlinks held back the writers). The queue has lanes, one
// goroutine each (Writers of them): the jobs of a key always go to the
// lane of its hash, and a lane is a FIFO served in queue order (a lane
// takes every job queued in it at once, syncs once for them, then removes
// them in order), so the order the writer chose (newest entries last,
// pass.finish) holds across the batches of a key: what a crash leaves on
// disk is still a suffix that ends with the file's last update, which the
// next start skips as applied (splitApplied).
//
// The batch ends (the index's Done, which forgets the settled times, and
// the end of its in flight state) only once its segments are removed, by
// its lane's goroutine: until then no other pass of the key starts, so
// none can read a segment that is applied but still on disk (indexed
// again by a walk of its leaf, say) and take it for one never applied, or
// see its entries as already applied next to others that are not. Other
// keys' passes go on meanwhile. A segment whose file could not be made
// durable, or whose removal failed, makes its key stuck (stuck.go): every
// later segment of the key becomes stuck behind it, untried, so the order
// holds there too, and the retry syncs again before it removes.
//
// The queue is bounded (removalQueueMax segments in all lanes): a writer
// that finds it full waits, so removals that cannot keep up slow the
// writers instead of growing memory. A lane's goroutine starts when
// segments are queued to it and ends when it is empty; wait waits for the
// segments queued before it, and Run, FlushAll, FlushKey
// and runOnce wait before they return, so none of them returns with
// removals of what it applied still queued.

// removalQueueMax bounds the segments queued or being removed.
const removalQueueMax = 4096

type removals struct {
	// durable makes the files of a group of jobs durable; it returns nil
	// if all are, or an error for each job (nil: durable). nil: the
	// policy none.
	durable func(group []removalJob) []error
	remove  func(spool.Ref) // removes one segment or records it stuck
	keep    func(spool.Ref) // records one segment stuck, untried: its file is not durable
	max     int             // removalQueueMax
	mu      sync.Mutex
	cond    sync.Cond // signalled when a job is done or a goroutine ends
	lanes   []removalLane
	refs    int // segments in the lanes and in the jobs being done
}

// removalLane is a FIFO of jobs and whether its goroutine runs; added and
// done count the jobs queued and done since the start.
type removalLane struct {
	queue, spare []removalJob
	busy         bool
	added, done  uint64
}

// removalJob is the applied segments of one batch, in the order they must
// be removed, the RRD file their values went to (made durable before they
// are removed; "" when none did), and what to do once they are removed
// (the batch's end).
type removalJob struct {
	refs []spool.Ref
	file string
	then func()
}

// newRemovals returns a queue of lanes lanes (at least 1) removing each
// segment with remove, under the policy none (see removals.durable).
func newRemovals(remove func(spool.Ref), lanes int) *removals {
	q := &removals{remove: remove, max: removalQueueMax, lanes: make([]removalLane, max(lanes, 1))}
	q.cond.L = &q.mu
	return q
}

// add queues refs (of one key), applied to the RRD file file, to be
// removed in order after every segment of the key queued before, and then
// then (nil: nothing); with no refs it calls then at once. It waits while
// the queue is full.
func (q *removals) add(refs []spool.Ref, file string, then func()) {
	if len(refs) == 0 {
		if then != nil {
			then()
		}
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.refs > 0 && q.refs+len(refs) > q.max {
		q.cond.Wait()
	}
	i := int(refs[0].Hash % uint64(len(q.lanes)))
	l := &q.lanes[i]
	l.queue = append(l.queue, removalJob{refs, file, then})
	q.refs += len(refs)
	l.added++
	if !l.busy {
		l.busy = true
		go q.serve(l)
	}
}

// serve does the jobs queued in lane l, every one queued at a time as one
// group, until it is empty.
func (q *removals) serve(l *removalLane) {
	q.mu.Lock()
	for len(l.queue) > 0 {
		group := l.queue
		l.queue, l.spare = l.spare[:0], nil
		q.mu.Unlock()
		q.settle(group)
		q.mu.Lock()
		for i := range group {
			q.refs -= len(group[i].refs)
			group[i] = removalJob{}
		}
		l.done += uint64(len(group))
		l.spare = group[:0]
		q.cond.Broadcast()
	}
	l.busy = false
	q.cond.Broadcast()
	q.mu.Unlock()
}

// settle makes the files of group durable, then removes each job's
// segments in order (or keeps those whose file is not durable) and ends
// its batch.
func (q *removals) settle(group []removalJob) {
	var errs []error
	if q.durable != nil {
		errs = q.durable(group)
	}
	for i, j := range group {
		for _, r := range j.refs {
			if errs != nil && errs[i] != nil {
				q.keep(r)
			} else {
				q.remove(r)
			}
		}
		if j.then != nil {
			j.then()
		}
	}
}

// wait waits until every job queued before the call is done.
func (q *removals) wait() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i := range q.lanes {
		for until := q.lanes[i].added; q.lanes[i].done < until; {
			q.cond.Wait()
		}
	}
}

// pending returns how many segments are queued or being removed.
func (q *removals) pending() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.refs
}
