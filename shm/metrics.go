package shm

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/spoold/spoold/internal/jsonfmt"
	"github.com/spoold/spoold/internal/statmetric"
)

// Fill is Bytes/MaxBytes, or 0 without a capacity.
func (s Stats) Fill() float64 {
	if s.MaxBytes <= 0 {
		return 0
	}
	return float64(s.Bytes) / float64(s.MaxBytes)
}

// MarshalJSON renders Stats by their tags (jsonfmt's times), with
// fill_ratio (Fill).
func (s Stats) MarshalJSON() ([]byte, error) {
	return jsonfmt.Marshal(s, struct {
		Fill float64 `json:"fill_ratio"`
	}{s.Fill()})
}

// NewCollector returns a prometheus.Collector of the index's Stats: one
// stats() per scrape (Index.Stats visits every key).
func NewCollector(stats func() Stats) prometheus.Collector { return metrics.Collector(stats) }

var metrics = statmetric.Table[Stats]{
	statmetric.Gauge("spoold_index_shards", "Shards of the in-memory index.", func(s Stats) float64 { return float64(s.Shards) }),
	statmetric.Gauge("spoold_index_keys", "Keys (targets) in the index.", func(s Stats) float64 { return float64(s.Keys) }),
	statmetric.Gauge("spoold_index_entries", "Entries in the index, pending and in flight.", func(s Stats) float64 { return float64(s.Entries) }),
	statmetric.Gauge("spoold_index_in_flight_entries", "Entries taken by the writer and not yet done.", func(s Stats) float64 { return float64(s.InFlight) }),
	statmetric.Gauge("spoold_index_backoff_keys", "Keys whose retry time is in the future.", func(s Stats) float64 { return float64(s.Backoff) }),
	statmetric.Gauge("spoold_index_bytes", "Accounted bytes of the index.", func(s Stats) float64 { return float64(s.Bytes) }),
	statmetric.Gauge("spoold_index_capacity_bytes", "Capacity of the index in accounted bytes (--keys-zone).", func(s Stats) float64 { return float64(s.MaxBytes) }),
	statmetric.Gauge("spoold_index_oldest_pending_time_seconds", "The oldest poll time in the index, Unix seconds; 0 if empty.", func(s Stats) float64 { return statmetric.UnixSeconds(s.OldestPending) }),
	statmetric.Counter("spoold_index_added_total", "Entries added to the index.", func(s Stats) uint64 { return s.Added }),
	statmetric.Counter("spoold_index_duplicates_total", "Adds of an entry already pending or in flight.", func(s Stats) uint64 { return s.Duplicates }),
	statmetric.Counter("spoold_index_full_total", "Adds refused because the index was full.", func(s Stats) uint64 { return s.Full }),
	statmetric.Gauge("spoold_index_held_keys", "Targets not written until a walk of the spool indexes the entries a full index refused (their older values must land first).", func(s Stats) float64 { return float64(s.Held) }),
	statmetric.Counter("spoold_index_collisions_total", "Adds refused because of a key hash collision.", func(s Stats) uint64 { return s.Collisions }),
	statmetric.Counter("spoold_index_taken_total", "Entries handed to the writer in batches.", func(s Stats) uint64 { return s.Taken }),
	statmetric.Counter("spoold_index_applied_total", "Entries removed from the index after they were applied.", func(s Stats) uint64 { return s.Applied }),
	statmetric.Counter("spoold_index_requeued_total", "Entries put back to pending after a failed write.", func(s Stats) uint64 { return s.Requeued }),
}
