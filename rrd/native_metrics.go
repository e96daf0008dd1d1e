package rrd

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/spoold/spoold/internal/statmetric"
)

// NewFilesCollector returns a prometheus.Collector of a Files' stats.
func NewFilesCollector(stats func() FilesStats) prometheus.Collector {
	return filesMetrics.Collector(stats)
}

var filesMetrics = statmetric.Table[FilesStats]{
	statmetric.Gauge("spoold_rrd_native_open_files", "RRD files held open by the native update path (--rrd-open-files bounds them).", func(s FilesStats) float64 { return float64(s.Open) }),
	statmetric.Counter("spoold_rrd_native_updates_total", "Update batches applied by the native path (one a file and flush).", func(s FilesStats) uint64 { return s.Updates }),
	statmetric.Counter("spoold_rrd_native_rows_total", "Updates (rows) applied by the native path.", func(s FilesStats) uint64 { return s.Applied }),
	statmetric.Counter("spoold_rrd_native_opens_total", "RRD files opened, and their headers parsed, by the native path.", func(s FilesStats) uint64 { return s.Opens }),
	statmetric.Counter("spoold_rrd_native_reopens_total", "Held RRD files found replaced at their path and opened again.", func(s FilesStats) uint64 { return s.Reopens }),
	statmetric.Counter("spoold_rrd_native_evictions_total", "Held RRD files closed to stay within --rrd-open-files.", func(s FilesStats) uint64 { return s.Evictions }),
	statmetric.Vec("spoold_rrd_native_fallbacks_total", "Update batches the native path left to librrd, by reason (architecture, version, layout, archive, ds_type, compute, value, template).",
		prometheus.CounterValue, []string{"reason"}, func(s FilesStats, emit statmetric.Emit) {
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
