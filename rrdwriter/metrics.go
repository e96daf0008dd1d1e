package rrdwriter

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/spoold/spoold/internal/jsonfmt"
	"github.com/spoold/spoold/internal/statmetric"
)

// MarshalText is the kind's name (String), as JSON shows it.
func (k ErrorKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// ErrorsByKind are the Errors with each kind's name, every kind present.
func (s Stats) ErrorsByKind() map[string]uint64 {
	m := make(map[string]uint64, len(s.Errors))
	for k, n := range s.Errors {
		m[ErrorKind(k).String()] = n
	}
	return m
}

// MarshalJSON renders Stats by their tags (jsonfmt's durations), with the
// errors by kind name.
func (s Stats) MarshalJSON() ([]byte, error) {
	return jsonfmt.Marshal(s, struct {
		Errors map[string]uint64 `json:"errors"`
	}{s.ErrorsByKind()})
}

// MarshalJSON renders ForwardStats by their tags (jsonfmt's times).
func (f ForwardStats) MarshalJSON() ([]byte, error) { return jsonfmt.Marshal(f) }

// MarshalJSON renders a TargetError by its tags (jsonfmt's times).
func (e TargetError) MarshalJSON() ([]byte, error) { return jsonfmt.Marshal(e) }

// NewCollector returns a prometheus.Collector of the writer's Stats: one
// stats() per scrape (Writer.Stats visits the index).
func NewCollector(stats func() Stats) prometheus.Collector { return metrics.Collector(stats) }

var metrics = statmetric.Table[Stats]{
	statmetric.Gauge("spoold_writer_queue_targets", "Targets with entries pending or being written.", func(s Stats) float64 { return float64(s.QueueLength) }),
	statmetric.Gauge("spoold_writer_pending_entries", "Entries waiting to be written to RRD files.", func(s Stats) float64 { return float64(s.EntriesPending) }),
	statmetric.Gauge("spoold_writer_in_flight_entries", "Entries being written now.", func(s Stats) float64 { return float64(s.InFlight) }),
	statmetric.Gauge("spoold_writer_backoff_targets", "Targets waiting for a retry after a failure.", func(s Stats) float64 { return float64(s.BackingOff) }),
	statmetric.Gauge("spoold_writer_failing_targets", "Targets with a current write error.", func(s Stats) float64 { return float64(s.TargetsFailing) }),
	statmetric.Gauge("spoold_writer_oldest_pending_age_seconds", "How long the oldest pending entry has been waiting.", func(s Stats) float64 { return s.OldestPendingAge.Seconds() }),
	statmetric.Counter("spoold_writer_update_calls_total", "librrd update calls.", func(s Stats) uint64 { return s.UpdateCalls }),
	statmetric.Counter("spoold_writer_entries_written_total", "Entries whose values librrd accepted.", func(s Stats) uint64 { return s.EntriesWritten }),
	statmetric.Counter("spoold_writer_values_written_total", "Values written to RRD files.", func(s Stats) uint64 { return s.ValuesWritten }),
	statmetric.Counter("spoold_writer_skipped_already_applied_total", "Entries at or before the RRD file's last update, removed unapplied.", func(s Stats) uint64 { return s.SkippedAlreadyApplied }),
	statmetric.Counter("spoold_writer_vanished_total", "Entries already gone from the spool when read.", func(s Stats) uint64 { return s.Vanished }),
	statmetric.Counter("spoold_writer_quarantined_total", "Corrupt segments and bytes, and entries set aside (librrd rejected, dated ahead, never applied, duplicate), quarantined.", func(s Stats) uint64 { return s.Quarantined }),
	statmetric.Counter("spoold_writer_quarantined_future_total", "Entries dated further ahead of the clock than --future-tolerance, quarantined unapplied.", func(s Stats) uint64 { return s.QuarantinedFuture }),
	statmetric.Counter("spoold_writer_quarantined_stale_total", "Entries older than their RRD file's last update that were never applied (a clock step), quarantined.", func(s Stats) uint64 { return s.QuarantinedStale }),
	statmetric.Gauge("spoold_writer_targets_awaiting_removal", "Targets whose applied segments could not be removed (a read-only spool) or their RRD file synced (--rrd-fsync); they wait.", func(s Stats) float64 { return float64(s.KeysAwaitingRemoval) }),
	statmetric.Counter("spoold_writer_remove_errors_total", "Applied entries that could not be removed from the spool.", func(s Stats) uint64 { return s.RemoveErrors }),
	statmetric.Counter("spoold_writer_rrd_syncs_total", "Syncs of updated RRD files or their file system before removing their entries (--rrd-fsync).", func(s Stats) uint64 { return s.RRDSyncs }),
	statmetric.Counter("spoold_writer_rrd_sync_errors_total", "Failed RRD syncs; their entries were kept.", func(s Stats) uint64 { return s.RRDSyncErrors }),
	statmetric.Gauge("spoold_writer_removals_pending", "Applied entries waiting for an RRD sync before their removal (--rrd-fsync batch).", func(s Stats) float64 { return float64(s.RemovalsPending) }),
	statmetric.Counter("spoold_writer_creates_total", "RRD files created.", func(s Stats) uint64 { return s.Creates }),
	statmetric.Counter("spoold_writer_prefetches_total", "RRD files whose pages an update touches were looked for in the page cache before it (--write-prefetch).", func(s Stats) uint64 { return s.Prefetches }),
	statmetric.Counter("spoold_writer_prefetches_cached_total", "Of the prefetches, files whose header was in the page cache: nothing was asked of the disk.", func(s Stats) uint64 { return s.PrefetchesCached }),
	statmetric.Counter("spoold_writer_backoffs_total", "Failed batches, each backing its target off.", func(s Stats) uint64 { return s.Backoffs }),
	statmetric.Counter("spoold_writer_priority_flushes_total", "Flushes of one target before a graph that took a batch.", func(s Stats) uint64 { return s.FlushesPriority }),
	statmetric.Counter("spoold_writer_graphs_total", "Graphs rendered.", func(s Stats) uint64 { return s.Graphs }),
	forwardMetric("spoold_writer_forward_up", "1 when the last exchange with the forward peer succeeded or it answered; 0 when it could not be reached.", prometheus.GaugeValue,
		func(f *ForwardStats) float64 { return statmetric.Bool(f.Up) }),
	forwardMetric("spoold_writer_forward_sent_rows_total", "Rows sent to the forward peer in UPDATEs.", prometheus.CounterValue,
		func(f *ForwardStats) float64 { return float64(f.Sent) }),
	forwardMetric("spoold_writer_forward_confirmed_rows_total", "Rows the forward peer's file showed at or before its last update (then their entries were removed).", prometheus.CounterValue,
		func(f *ForwardStats) float64 { return float64(f.Confirmed) }),
	forwardMetric("spoold_writer_forward_failures_total", "Exchanges with the forward peer that failed: unreachable, refused or unconfirmed (the entries stayed spooled).", prometheus.CounterValue,
		func(f *ForwardStats) float64 { return float64(f.Failed) }),
	statmetric.Vec("spoold_writer_errors_total", "Failed write batches by kind.", prometheus.CounterValue, []string{"kind"},
		func(s Stats, emit statmetric.Emit) {
			for k, n := range s.Errors {
				emit(float64(n), ErrorKind(k).String())
			}
		}),
}

// forwardMetric is a metric of the forward peer, labelled with its
// address, present only when the writer forwards.
func forwardMetric(name, help string, typ prometheus.ValueType, v func(*ForwardStats) float64) statmetric.Metric[Stats] {
	return statmetric.Vec(name, help, typ, []string{"peer"}, func(s Stats, emit statmetric.Emit) {
		if s.Forward != nil {
			emit(v(s.Forward), s.Forward.Peer)
		}
	})
}
