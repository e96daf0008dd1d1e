package loader

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/spoold/spoold/internal/jsonfmt"
	"github.com/spoold/spoold/internal/statmetric"
)

// MarshalJSON renders Stats by their tags (jsonfmt's times and durations).
func (s Stats) MarshalJSON() ([]byte, error) { return jsonfmt.Marshal(s) }

// MarshalJSON renders Params by their tags, with cpu_mode.
func (p Params) MarshalJSON() ([]byte, error) {
	return jsonfmt.Marshal(p, struct {
		CPUMode bool `json:"cpu_mode"`
	}{p.CPUMode()})
}

// NewCollector returns a prometheus.Collector of the loader's Stats: one
// stats() per scrape.
func NewCollector(stats func() Stats) prometheus.Collector { return metrics.Collector(stats) }

var metrics = statmetric.Table[Stats]{
	statmetric.Gauge("spoold_loader_running", "1 while a loader walk of the spool is running.", func(s Stats) float64 { return statmetric.Bool(s.Running) }),
	statmetric.Gauge("spoold_loader_progress_ratio", "Fraction of the spool's hash space covered by the current or last walk (0..1).", func(s Stats) float64 { return s.Progress }),
	statmetric.Gauge("spoold_loader_eta_seconds", "Estimated time left of the running walk; 0 when unknown or not running.", func(s Stats) float64 { return s.ETA.Seconds() }),
	statmetric.Gauge("spoold_loader_rate_files_per_second", "Files per second of the current or last walk.", func(s Stats) float64 { return s.Rate }),
	statmetric.Gauge("spoold_loader_walk_start_time_seconds", "When the current or last walk started, Unix seconds; 0 before the first.", func(s Stats) float64 { return statmetric.UnixSeconds(s.Started) }),
	statmetric.Gauge("spoold_loader_walk_end_time_seconds", "When the last walk ended, Unix seconds; 0 while running and before the first.", func(s Stats) float64 { return statmetric.UnixSeconds(s.Finished) }),
	statmetric.Gauge("spoold_loader_walk_leaf_dirs", "Leaf directories walked by the current or last walk.", func(s Stats) float64 { return float64(s.LeafDirs) }),
	statmetric.Gauge("spoold_warmup_leaves_ready", "Leaf directories whose keys may be written: walked by the start-up walk or on demand.", func(s Stats) float64 { return float64(s.Warmup.LeavesDone) }),
	statmetric.Gauge("spoold_warmup_leaves", "Leaf directories of the spool's layout.", func(s Stats) float64 { return float64(s.Warmup.LeavesTotal) }),
	statmetric.Counter("spoold_warmup_leaves_on_demand_total", "Leaf directories walked at once for a graph or flush before the start-up walk reached them.", func(s Stats) uint64 { return s.Warmup.OnDemand }),
	statmetric.Gauge("spoold_warmup_complete", "1 once the start-up walk (or a flush of everything) has indexed the whole spool.", func(s Stats) float64 { return statmetric.Bool(s.Warmup.All) }),
	statmetric.Vec("spoold_loader_walk_files", "Files of the current or last walk by result (reset at each walk): seen, indexed, existing (already indexed), full (left on disk, index full), quarantined, temp_removed, foreign, error.",
		prometheus.GaugeValue, []string{"result"}, func(s Stats, emit statmetric.Emit) {
			emit(float64(s.Files), "seen")
			emit(float64(s.Indexed), "indexed")
			emit(float64(s.Existing), "existing")
			emit(float64(s.Full), "full")
			emit(float64(s.Quarantined), "quarantined")
			emit(float64(s.TempRemoved), "temp_removed")
			emit(float64(s.Foreign), "foreign")
			emit(float64(s.Errors), "error")
		}),
	statmetric.Gauge("spoold_loader_walk_iterations", "Throttle iterations of the current or last walk.", func(s Stats) float64 { return float64(s.Iterations) }),
	statmetric.Gauge("spoold_loader_walk_sleep_seconds", "Time the current or last walk paused.", func(s Stats) float64 { return s.Slept.Seconds() }),
	statmetric.Gauge("spoold_loader_walk_cpu_seconds", "CPU time of the current or last walk's thread.", func(s Stats) float64 { return s.CPU.Seconds() }),
	statmetric.Gauge("spoold_loader_iteration_files", "Iteration size in files (steered in CPU mode, loader_files otherwise).", func(s Stats) float64 { return float64(s.IterationFiles) }),
	statmetric.Gauge("spoold_loader_param_files", "loader_files: the most files of one iteration.", func(s Stats) float64 { return float64(s.Params.Files) }),
	statmetric.Gauge("spoold_loader_param_sleep_seconds", "loader_sleep: the pause between iterations.", func(s Stats) float64 { return s.Params.Sleep.Seconds() }),
	statmetric.Gauge("spoold_loader_param_threshold_seconds", "loader_threshold: the longest iteration.", func(s Stats) float64 { return s.Params.Threshold.Seconds() }),
	statmetric.Gauge("spoold_loader_param_cpu_ratio", "loader_cpu: the share of one core in CPU mode; 0 when off.", func(s Stats) float64 { return s.Params.CPU }),
}
