package rrdwriter

import (
	"sync/atomic"
	"time"
)

// counters are the writer's counters since New.
type counters struct {
	updateCalls, valuesWritten, entriesWritten, skipped, vanished atomic.Uint64
	quarantined, removeErrors, creates, backoffs, flushesPriority atomic.Uint64
	graphs, rrdSyncs, rrdSyncErrors, prefetches, prefetchesCached atomic.Uint64
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
// index; the counters count since New. Prefetches are in /metrics only.
type Stats struct {
	// QueueLength is the number of targets with entries pending or being
	// written (rrdcached QueueLength); EntriesPending their spool segments
	// (each holds one or more entries).
	QueueLength    int `json:"queue_length"`
	EntriesPending int `json:"entries_pending"`
	// InFlight are the entries being written now; BackingOff the targets
	// waiting for a retry; TargetsFailing the targets with a current error.
	InFlight       int `json:"in_flight"`
	BackingOff     int `json:"backing_off"`
	TargetsFailing int `json:"targets_failing"`
	// OldestPendingAge is how long the oldest entry has been waiting.
	OldestPendingAge time.Duration `json:"oldest_pending_age_seconds"`

	UpdateCalls           uint64 `json:"update_calls"`             // librrd update calls (rrdcached UpdatesWritten)
	EntriesWritten        uint64 `json:"entries_written"`          // entries whose values librrd accepted
	ValuesWritten         uint64 `json:"values_written"`           // their values (rrdcached DataSetsWritten counts rows)
	SkippedAlreadyApplied uint64 `json:"skipped_already_applied"`  // entries at or before the file's last update, removed unapplied
	Vanished              uint64 `json:"vanished"`                 // entries already gone from the spool when read
	Quarantined           uint64 `json:"quarantined"`              // corrupt segments and bytes, and entries set aside (librrd rejected, future, stale, duplicate)
	QuarantinedFuture     uint64 `json:"quarantined_future"`       // entries dated beyond FutureTolerance ahead of the clock
	QuarantinedStale      uint64 `json:"quarantined_stale"`        // entries older than their file's last update that were never applied
	KeysAwaitingRemoval   int    `json:"targets_awaiting_removal"` // targets held: applied segments that could not be removed
	RemoveErrors          uint64 `json:"remove_errors"`            // applied entries that could not be removed
	Creates               uint64 `json:"creates"`                  // RRD files created
	Backoffs              uint64 `json:"backoffs"`                 // failed batches (each backs its target off)
	FlushesPriority       uint64 `json:"flushes_priority"`         // FlushKey calls that took a batch
	Graphs                uint64 `json:"graphs"`                   // graphs rendered
	RRDSyncs              uint64 `json:"rrd_syncs"`                // syncs of RRD files or their file system (RRDFsync)
	RRDSyncErrors         uint64 `json:"rrd_sync_errors"`          // failed ones: the entries were kept
	RemovalsPending       int    `json:"removals_pending"`         // applied segments queued for removal (or for a sync first, RRDFsync batch)
	Prefetches            uint64 `json:"-"`                        // files whose update pages were asked for ahead (Prefetch)
	PrefetchesCached      uint64 `json:"-"`                        // of them, files whose header was cached: nothing asked for
	// Forward is the forward peer's state; nil unless Options.Forward.
	Forward *ForwardStats `json:"forward,omitempty"`
	// Errors counts failed batches by kind, indexed by ErrorKind.
	Errors [numKinds]uint64 `json:"-"`
}

// Stats returns the writer's statistics. It reads the index's Stats, which
// visits every key.
func (w *Writer) Stats() Stats {
	is := w.ix.Stats()
	c := &w.c
	syncfs, syncfsErrors := w.syncs.counts()
	s := Stats{
		QueueLength: is.Keys, EntriesPending: is.Entries, InFlight: is.InFlight, BackingOff: is.Backoff,
		UpdateCalls: c.updateCalls.Load(), EntriesWritten: c.entriesWritten.Load(), ValuesWritten: c.valuesWritten.Load(),
		SkippedAlreadyApplied: c.skipped.Load(), Vanished: c.vanished.Load(), Quarantined: c.quarantined.Load(),
		RemoveErrors: c.removeErrors.Load(), Creates: c.creates.Load(), Backoffs: c.backoffs.Load(),
		FlushesPriority: c.flushesPriority.Load(), Graphs: c.graphs.Load(),
		RRDSyncs: c.rrdSyncs.Load() + syncfs, RRDSyncErrors: c.rrdSyncErrors.Load() + syncfsErrors, RemovalsPending: w.rq.pending(),
		Prefetches: c.prefetches.Load(), PrefetchesCached: c.prefetchesCached.Load(), QuarantinedFuture: c.future.Load(), QuarantinedStale: c.stale.Load(),
	}
	if !is.OldestPending.IsZero() {
		s.OldestPendingAge = w.o.Now().Sub(is.OldestPending)
	}
	for k := range s.Errors {
		s.Errors[k] = c.errors[k].Load()
	}
	if w.fwd != nil {
		s.Forward = w.fwd.stats(s.EntriesPending)
	}
	w.own(func(tb *table) { s.TargetsFailing, s.KeysAwaitingRemoval = len(tb.errs), len(tb.stuck) })
	return s
}

// Written returns how many librrd update calls the writer made and how
// many entries they wrote since New (Stats' UpdateCalls and
// EntriesWritten, without visiting the index).
func (w *Writer) Written() (updateCalls, entries uint64) {
	return w.c.updateCalls.Load(), w.c.entriesWritten.Load()
}
