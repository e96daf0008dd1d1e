// Package intake owns the order in which a new entry reaches spoold: on
// disk first, then in the index. It is the one way in for the poller's
// results and the rrdcached protocol's updates.
//
// An entry is appended to its key's open segment in the spool (package
// spool); when it starts a new segment, that segment is added to the
// in-memory index (package shm), so the writer finds it. The index is
// rebuildable from the disk: when it refuses a segment (it is full,
// typically) the entry stays on disk, the caller counts it, and the
// loader's next rescan of the spool indexes it. Nothing is dropped.
//
// An Intake starts no goroutines; it is safe for concurrent use when its
// spool and index are (*spool.Spool and *shm.Index are).
package intake

import "github.com/spoold/spoold/spool"

// Spool stores entries: *spool.Spool, whose Append adds an entry to its
// key's open segment and reports whether it started a new one, ref.
type Spool interface {
	Append(e *spool.Entry) (ref spool.Ref, created bool, err error)
}

// Index is the in-memory index of pending segments: *shm.Index.
type Index interface {
	Add(hash uint64, key string, ts int64) (added bool, err error)
}

// Intake appends entries to a spool and indexes the segments they start.
type Intake struct {
	sp Spool
	ix Index // nil: no index
}

// New returns the intake of sp and ix; a nil ix indexes nothing (a spool
// that is only filled, as the poller's benchmarks do).
func New(sp Spool, ix Index) *Intake { return &Intake{sp: sp, ix: ix} }

// Append appends e to the open segment of e.Key and, when e started a new
// segment, adds the segment to the index.
//
// err is the spool's: e is not stored. With err nil e is on disk (durable
// as the spool's fsync policy makes it); indexErr is then the index's
// refusal of the segment e started, or nil. A refused segment is indexed
// by the next rescan of the spool: the caller counts it and goes on.
func (in *Intake) Append(e *spool.Entry) (indexErr, err error) {
	ref, created, err := in.sp.Append(e)
	if err != nil || !created || in.ix == nil {
		return nil, err
	}
	_, indexErr = in.ix.Add(ref.Hash, e.Key, ref.Time)
	return indexErr, nil
}

// runSpool is a Spool that appends a run of entries with one write per
// segment: *spool.Spool.
type runSpool interface {
	AppendRun(es []spool.Entry, created []spool.Ref) (int, []spool.Ref, error)
}

// AppendRun is Append of the entries es, all of one key, in order: with
// a spool that can (*spool.Spool's AppendRun), each run of them that goes
// into one segment is one write. It stops at the first entry the spool
// refuses and returns how many are on disk, that entry's error, and how
// many segments the index refused, with the last refusal; created is
// scratch memory for the segments started (returned for reuse).
func (in *Intake) AppendRun(es []spool.Entry, created []spool.Ref) (n int, scratch []spool.Ref, indexRefused int, indexErr, err error) {
	rs, ok := in.sp.(runSpool)
	if !ok {
		for n = range es {
			ierr, err := in.Append(&es[n])
			if err != nil {
				return n, created, indexRefused, indexErr, err
			}
			if ierr != nil {
				indexRefused, indexErr = indexRefused+1, ierr
			}
		}
		return len(es), created, indexRefused, indexErr, nil
	}
	n, created, err = rs.AppendRun(es, created[:0])
	if in.ix != nil {
		for _, ref := range created {
			if _, ierr := in.ix.Add(ref.Hash, es[0].Key, ref.Time); ierr != nil {
				indexRefused, indexErr = indexRefused+1, ierr
			}
		}
	}
	return n, created, indexRefused, indexErr, err
}
