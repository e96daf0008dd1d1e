package rrdwriter

import (
	"sync/atomic"
	"time"
)

// counters are the writer's counters since New.
type counters struct {
	updateCalls, valuesWritten, entriesWritten, skipped, vanished atomic.Uint64
	quarantined, removeErrors, creates, backoffs, flushesPriority atomic.Uint64
	graphs, rrdSyncs, rrdSyncErrors, prefetches                   atomic.Uint64
	future, stale                                                 atomic.Uint64
	errors                                                        [numKinds]atomic.Uint64
}

// written counts entries whose values librrd accepted.
func (c *counters) written(items []item) {
	var values uint64
	for _, it := range items {
		values += uint64(len(it.e.Values))
	}
	c.entriesWritten.Add(uint64(len(items)))
	c.valuesWritten.Add(values)
}

// Stats are rrdcached's STATS and more. The queue figures come from the
// index; the counters count since New.
type Stats struct {
	// QueueLength is the number of targets with entries pending or being
	// written (rrdcached QueueLength); EntriesPending their spool segments
	// (each holds one or more entries).
	QueueLength, EntriesPending int
	// InFlight are the entries being written now; BackingOff the targets
	// waiting for a retry; TargetsFailing the targets with a current error.
	InFlight, BackingOff, TargetsFailing int
	// OldestPendingAge is how long the oldest entry has been waiting.
	OldestPendingAge time.Duration

	UpdateCalls           uint64 // librrd update calls (rrdcached UpdatesWritten)
	EntriesWritten        uint64 // entries whose values librrd accepted
	ValuesWritten         uint64 // their values (rrdcached DataSetsWritten counts rows)
	SkippedAlreadyApplied uint64 // entries at or before the file's last update, removed unapplied
	Vanished              uint64 // entries already gone from the spool when read
	Quarantined           uint64 // corrupt segments and bytes, and entries set aside (librrd rejected, future, stale, duplicate)
	QuarantinedFuture     uint64 // entries dated beyond FutureTolerance ahead of the clock
	QuarantinedStale      uint64 // entries older than their file's last update that were never applied
	KeysAwaitingRemoval   int    // targets held: applied segments that could not be removed
	RemoveErrors          uint64 // applied entries that could not be removed
	Creates               uint64 // RRD files created
	Backoffs              uint64 // failed batches (each backs its target off)
	FlushesPriority       uint64 // FlushKey calls that took a batch
	Graphs                uint64 // graphs rendered
	RRDSyncs              uint64 // syncs of RRD files or their file system (RRDFsync)
	RRDSyncErrors         uint64 // failed ones: the entries were kept
	RemovalsPending       int    // applied entries waiting for a sync to be removed (RRDFsync batch)
	Prefetches            uint64 // files whose update pages were asked for ahead (Prefetch)
	// Errors counts failed batches by kind, indexed by ErrorKind.
	Errors [numKinds]uint64
}

// Stats returns the writer's statistics. It reads the index's Stats, which
// visits every key.
func (w *Writer) Stats() Stats {
	is := w.ix.Stats()
	c := &w.c
	s := Stats{
		QueueLength: is.Keys, EntriesPending: is.Entries, InFlight: is.InFlight, BackingOff: is.Backoff,
		UpdateCalls: c.updateCalls.Load(), EntriesWritten: c.entriesWritten.Load(), ValuesWritten: c.valuesWritten.Load(),
		SkippedAlreadyApplied: c.skipped.Load(), Vanished: c.vanished.Load(), Quarantined: c.quarantined.Load(),
		RemoveErrors: c.removeErrors.Load(), Creates: c.creates.Load(), Backoffs: c.backoffs.Load(),
		FlushesPriority: c.flushesPriority.Load(), Graphs: c.graphs.Load(),
		RRDSyncs: c.rrdSyncs.Load(), RRDSyncErrors: c.rrdSyncErrors.Load(), RemovalsPending: w.rm.pending(),
		Prefetches: c.prefetches.Load(), QuarantinedFuture: c.future.Load(), QuarantinedStale: c.stale.Load(),
		KeysAwaitingRemoval: w.stuck.keys(),
	}
	if !is.OldestPending.IsZero() {
		s.OldestPendingAge = w.o.Now().Sub(is.OldestPending)
	}
	for k := range s.Errors {
		s.Errors[k] = c.errors[k].Load()
	}
	w.errMu.Lock()
	s.TargetsFailing = len(w.errs)
	w.errMu.Unlock()
	return s
}
