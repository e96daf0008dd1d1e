package admin

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/spoold/spoold/internal/statmetric"
	"github.com/spoold/spoold/loader"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

// NewCollector returns the prometheus.Collector of b's Status: one
// snapshot per scrape, the same snapshot /status shows, exposed through the
// packages' collectors (spool, shm, loader, rrdwriter, poller) and admin's
// own metrics (build, uptime, index overflow, next rescan, orphans,
// targets, disk). now fills a snapshot's zero Now; nil is time.Now.
func NewCollector(b Daemon, now func() time.Time) prometheus.Collector {
	if now == nil {
		now = time.Now
	}
	return &statusCollector{b: b, now: now}
}

type statusCollector struct {
	b   Daemon
	now func() time.Time
}

func (c *statusCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range (Status{}).collectors() {
		m.Describe(ch)
	}
}

func (c *statusCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.b.Status()
	if s.Now.IsZero() {
		s.Now = c.now()
	}
	for _, m := range s.collectors() {
		m.Collect(ch)
	}
}

// collectors are the collectors of the snapshot s.
func (s Status) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		statusMetrics.Collector(func() Status { return s }),
		loader.NewCollector(func() loader.Stats { return s.Loader }),
		shm.NewCollector(func() shm.Stats { return s.Index }),
		spool.NewCollector(func() spool.Stats { return s.Spool }),
		rrdwriter.NewCollector(func() rrdwriter.Stats { return s.Writer }),
		poller.NewCollector(func() poller.CycleStats {
			if s.LastCycle == nil {
				return poller.CycleStats{}
			}
			return *s.LastCycle
		}),
		diskMetrics.Collector(func() DiskStatus { return s.Disk }),
	}
}

// statusMetrics are the figures of the Status itself, not of a package's
// Stats.
var statusMetrics = statmetric.Table[Status]{
	statmetric.Vec("spoold_build_info", "Always 1; the version label is spoold's version.", prometheus.GaugeValue, []string{"version"},
		func(s Status, emit statmetric.Emit) { emit(1, s.Version) }),
	statmetric.Gauge("spoold_start_time_seconds", "When the daemon started, Unix seconds.", func(s Status) float64 { return statmetric.UnixSeconds(s.Started) }),
	statmetric.Gauge("spoold_uptime_seconds", "Seconds since the daemon started.", func(s Status) float64 { return s.uptime().Seconds() }),
	statmetric.Gauge("spoold_loader_next_rescan_time_seconds", "When the next rescan walk starts, Unix seconds; 0 if none is scheduled.",
		func(s Status) float64 { return statmetric.UnixSeconds(s.LoaderNextRescan) }),
	statmetric.Gauge("spoold_index_full", "1 when an add was refused because the index was full since the last rescan began: entries wait on disk.",
		func(s Status) float64 { return statmetric.Bool(s.IndexOverflowed) }),
	statmetric.Gauge("spoold_writer_orphan_targets", "Keys with entries in the spool but no profile and no RRD file; their entries stay.",
		func(s Status) float64 { return float64(len(rrdwriter.Orphans(s.WriterErrors))) }),
	statmetric.Gauge("spoold_poller_interval_seconds", "Time between poll cycle starts.", func(s Status) float64 { return s.PollInterval.Seconds() }),
	statmetric.Vec("spoold_target_health", "Target health as a state set: 1 for the target's current state (ok, failing, backoff, new), 0 for the others.",
		prometheus.GaugeValue, []string{"target", "state"}, func(s Status, emit statmetric.Emit) {
			for _, t := range s.Targets {
				for _, h := range healthStates {
					emit(statmetric.Bool(t.Health == h), t.Name, string(h))
				}
			}
		}),
	targetMetric("spoold_target_last_success_time_seconds", "When the target last answered a poll, Unix seconds; 0 if never.", prometheus.GaugeValue,
		func(t TargetStatus) float64 { return statmetric.UnixSeconds(t.LastSuccess) }),
	targetMetric("spoold_target_rtt_seconds", "Duration of the target's last answered poll.", prometheus.GaugeValue,
		func(t TargetStatus) float64 { return t.RTT.Seconds() }),
	targetMetric("spoold_target_consecutive_failures", "Polls without an answer since the target's last success.", prometheus.GaugeValue,
		func(t TargetStatus) float64 { return float64(t.ConsecutiveFailures) }),
	targetMetric("spoold_target_polls_total", "Polls of the target since it was added.", prometheus.CounterValue,
		func(t TargetStatus) float64 { return float64(t.Polls) }),
	targetMetric("spoold_target_poll_failures_total", "Polls of the target without an answer since it was added.", prometheus.CounterValue,
		func(t TargetStatus) float64 { return float64(t.Failures) }),
	targetMetric("spoold_target_write_failing", "1 while the target's RRD file has a current write error.", prometheus.GaugeValue,
		func(t TargetStatus) float64 { return statmetric.Bool(t.WriteError != "") }),
}

// targetMetric is a family with one series per target, labelled target.
func targetMetric(name, help string, typ prometheus.ValueType, v func(TargetStatus) float64) statmetric.Metric[Status] {
	return statmetric.Vec(name, help, typ, []string{"target"}, func(s Status, emit statmetric.Emit) {
		for _, t := range s.Targets {
			emit(v(t), t.Name)
		}
	})
}

// metricsHandler serves g through promhttp, each gathering kept for
// maxAge like the other status bodies (see cache.go): gathering takes
// a full snapshot, while encoding the kept families per request (in the
// format and compression each scraper asks for) is cheap. A gathering
// error is logged and what could be gathered is served.
func metricsHandler(g prometheus.Gatherer, c *cache[[]*dto.MetricFamily], log *slog.Logger) http.Handler {
	cached := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return c.get(g.Gather) })
	h := promhttp.HandlerFor(cached, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(log.Handler(), slog.LevelError),
		ErrorHandling: promhttp.ContinueOnError,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}
