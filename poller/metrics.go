package poller

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/spoold/spoold/internal/jsonfmt"
	"github.com/spoold/spoold/internal/statmetric"
)

// MarshalJSON renders CycleStats by their tags (jsonfmt's times and
// durations).
func (c CycleStats) MarshalJSON() ([]byte, error) { return jsonfmt.Marshal(c) }

// NewCollector returns a prometheus.Collector of the last poll cycle
// (Poller.LastCycle: Seq 0 before the first, when only
// spoold_poller_cycles_seen is reported).
func NewCollector(last func() CycleStats) prometheus.Collector { return metrics.Collector(last) }

// cycleGauge is a gauge of the last cycle, absent before the first.
func cycleGauge(name, help string, v func(CycleStats) float64) statmetric.Metric[CycleStats] {
	return cycleVec(name, help, nil, func(c CycleStats, emit statmetric.Emit) { emit(v(c)) })
}

// cycleVec is a gauge family of the last cycle, absent before the first.
func cycleVec(name, help string, labels []string, each func(CycleStats, statmetric.Emit)) statmetric.Metric[CycleStats] {
	return statmetric.Vec(name, help, prometheus.GaugeValue, labels, func(c CycleStats, emit statmetric.Emit) {
		if c.Seq > 0 {
			each(c, emit)
		}
	})
}

var metrics = statmetric.Table[CycleStats]{
	statmetric.Gauge("spoold_poller_cycles_seen", "0 before the first poll cycle ended, 1 after.", func(c CycleStats) float64 { return statmetric.Bool(c.Seq > 0) }),
	cycleGauge("spoold_poller_last_cycle_seq", "Sequence number of the last poll cycle.", func(c CycleStats) float64 { return float64(c.Seq) }),
	cycleGauge("spoold_poller_last_cycle_start_time_seconds", "When the last poll cycle started, Unix seconds.", func(c CycleStats) float64 { return statmetric.UnixSeconds(c.Start) }),
	cycleGauge("spoold_poller_last_cycle_duration_seconds", "Duration of the last poll cycle.", func(c CycleStats) float64 { return c.Duration.Seconds() }),
	cycleVec("spoold_poller_last_cycle_devices", "Devices of the last poll cycle by result: ok (answered), failed (no answer), skipped (backoff), overrun (cut by the cycle deadline), stopped (not polled, or cut short, because the daemon stopped).",
		[]string{"result"}, func(c CycleStats, emit statmetric.Emit) {
			emit(float64(c.OK), "ok")
			emit(float64(c.Failed), "failed")
			emit(float64(c.Skipped), "skipped")
			emit(float64(c.Overrun), "overrun")
			emit(float64(c.Stopped), "stopped")
		}),
	cycleVec("spoold_poller_last_cycle_failures", "Failed polls of the last cycle by kind: timeout (no usable answer in time: silent, late, or answers that do not match the request), malformed (bytes that do not parse as SNMP), agent_error (an error status), other.",
		[]string{"kind"}, func(c CycleStats, emit statmetric.Emit) {
			emit(float64(c.Timeouts), "timeout")
			emit(float64(c.Malformed), "malformed")
			emit(float64(c.AgentErrors), "agent_error")
			emit(float64(c.OtherErrors), "other")
		}),
	cycleGauge("spoold_poller_last_cycle_wrong_types", "Values of the last cycle whose SNMP type does not fit their data source (stored as unknown).", func(c CycleStats) float64 { return float64(c.WrongTypes) }),
	cycleGauge("spoold_poller_last_cycle_values", "Values written by the last poll cycle.", func(c CycleStats) float64 { return float64(c.Values) }),
	cycleGauge("spoold_poller_last_cycle_unknown_values", "Unknown values among them.", func(c CycleStats) float64 { return float64(c.Unknown) }),
	cycleGauge("spoold_poller_last_cycle_discontinuities", "Entries of the last cycle flagged as a counter discontinuity.", func(c CycleStats) float64 { return float64(c.Discontinuities) }),
	cycleGauge("spoold_poller_last_cycle_write_errors", "Answered polls of the last cycle whose entry could not be written.", func(c CycleStats) float64 { return float64(c.WriteErrors) }),
	cycleGauge("spoold_poller_last_cycle_requests", "SNMP requests (Gets and GetBulks) of the answered polls of the last cycle.", func(c CycleStats) float64 { return float64(c.Requests) }),
	cycleGauge("spoold_poller_last_cycle_rows", "Table rows' entries written by the last cycle.", func(c CycleStats) float64 { return float64(c.Rows) }),
	cycleGauge("spoold_poller_last_cycle_polls_in_flight_max", "Most polls in flight at once in the last cycle (at most --poll-concurrency).", func(c CycleStats) float64 { return float64(c.InFlightMax) }),
	cycleGauge("spoold_poller_last_cycle_polls_in_flight_limit", "The limit of polls in flight (those not yet twice as long as most) the last cycle ended with: below --poll-concurrency while the CPUs had no idle time; the next cycle starts at it.", func(c CycleStats) float64 { return float64(c.InFlightLimit) }),
	cycleGauge("spoold_poller_last_cycle_stale_rows", "Table rows of the last cycle not written: the agent restarted and could not be discovered again.", func(c CycleStats) float64 { return float64(c.StaleRows) }),
	cycleGauge("spoold_poller_last_cycle_index_deferred", "Entries of the last cycle the index refused (waiting on disk).", func(c CycleStats) float64 { return float64(c.IndexDeferred) }),
}
