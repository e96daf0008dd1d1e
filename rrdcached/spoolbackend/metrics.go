package spoolbackend

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/spoold/spoold/internal/statmetric"
)

// NewCollector returns a prometheus.Collector of the backend's
// BackendStats: one stats() per scrape. (The protocol server counts
// connections, commands and its own refusals; these are what the backend
// did with the updates.)
func NewCollector(stats func() BackendStats) prometheus.Collector {
	return backendMetrics.Collector(stats)
}

var backendMetrics = statmetric.Table[BackendStats]{
	statmetric.Counter("spoold_rrdcached_update_commands_total", "UPDATE commands the backend received.", func(s BackendStats) uint64 { return s.UpdatesReceived }),
	statmetric.Counter("spoold_rrdcached_updates_spooled_total", "Updates of the rrdcached protocol spooled (acknowledged).", func(s BackendStats) uint64 { return s.ValuesReceived }),
	statmetric.Vec("spoold_rrdcached_updates_refused_total", "Updates of the rrdcached protocol refused, by reason ("+refusalList()+").", prometheus.CounterValue, []string{"reason"},
		func(s BackendStats, emit statmetric.Emit) {
			for _, r := range refusalNames {
				emit(float64(s.Refused[r]), string(r))
			}
		}),
	statmetric.Counter("spoold_rrdcached_updates_index_deferred_total", "Spooled updates a full index refused; a rescan indexes them.", func(s BackendStats) uint64 { return s.IndexDeferred }),
	statmetric.Counter("spoold_rrdcached_flushes_total", "FLUSH commands.", func(s BackendStats) uint64 { return s.FlushesReceived }),
	statmetric.Counter("spoold_rrdcached_forgets_total", "FORGET commands (spoold keeps the updates).", func(s BackendStats) uint64 { return s.Forgets }),
	statmetric.Counter("spoold_rrdcached_creates_total", "RRD files made by CREATE.", func(s BackendStats) uint64 { return s.Creates }),
	statmetric.Counter("spoold_rrdcached_overwrites_total", "RRD files CREATE replaced (none with updates pending).", func(s BackendStats) uint64 { return s.Overwrites }),
	statmetric.Gauge("spoold_rrdcached_files", "RRD files updated over the protocol since the start (and not forgotten).", func(s BackendStats) float64 { return float64(s.Files) }),
}

// refusalList is the refusal reasons, comma-separated, in their order.
func refusalList() string {
	names := make([]string, len(refusalNames))
	for i, r := range refusalNames {
		names[i] = string(r)
	}
	return strings.Join(names, ", ")
}
