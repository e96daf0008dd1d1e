package rrd

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/spoold/spoold/internal/statmetric"
)

// NewHeaderCacheCollector returns a prometheus.Collector of a HeaderCache's stats.
func NewHeaderCacheCollector(stats func() HeaderCacheStats) prometheus.Collector {
	return filesMetrics.Collector(stats)
}

var filesMetrics = statmetric.Table[HeaderCacheStats]{
	statmetric.Gauge("spoold_rrd_native_headers", "Parsed RRD headers the native update path keeps (--rrd-open-files bounds them).", func(s HeaderCacheStats) float64 { return float64(s.Headers) }),
	statmetric.Counter("spoold_rrd_native_updates_total", "Update batches applied by the native path (one a file and flush).", func(s HeaderCacheStats) uint64 { return s.Updates }),
	statmetric.Counter("spoold_rrd_native_rows_total", "Updates (rows) applied by the native path.", func(s HeaderCacheStats) uint64 { return s.Applied }),
	statmetric.Counter("spoold_rrd_native_parses_total", "RRD files whose header the native path read without a kept one (first use, replaced, dropped).", func(s HeaderCacheStats) uint64 { return s.Parses }),
	statmetric.Counter("spoold_rrd_native_replaced_total", "RRD files found replaced at their path (another inode) and parsed afresh.", func(s HeaderCacheStats) uint64 { return s.Replaced }),
	statmetric.Counter("spoold_rrd_native_evictions_total", "Parsed headers dropped to stay within --rrd-open-files.", func(s HeaderCacheStats) uint64 { return s.Evictions }),
	statmetric.Vec("spoold_rrd_native_fallbacks_total", "Update batches the native path left to librrd, by reason (architecture, version, layout, archive, ds_type, compute, value, template).",
		prometheus.CounterValue, []string{"reason"}, func(s HeaderCacheStats, emit statmetric.Emit) {
			reasons := make([]string, 0, len(s.Fallbacks))
			for r := range s.Fallbacks {
				reasons = append(reasons, r)
			}
			sort.Strings(reasons)
			for _, r := range reasons {
				emit(float64(s.Fallbacks[r]), r)
			}
		}),
}
