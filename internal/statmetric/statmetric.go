// Package statmetric exposes a package's Stats struct as Prometheus metrics,
// in the style of node_exporter's collectors: each metric is described once
// (prometheus.NewDesc, in a package-level table next to the Stats it reads)
// and its value is read from one Stats snapshot per scrape. A package's
// collector is then its table and the function that returns its Stats:
//
//	var metrics = statmetric.Table[Stats]{
//		statmetric.Counter("spoold_spool_written_entries_total", "Spool entries published.",
//			func(s Stats) uint64 { return s.Written }),
//	}
//	func NewCollector(stats func() Stats) prometheus.Collector { return metrics.Collector(stats) }
//
// The counters stay the package's own (atomics summed into Stats, as
// fastcache's UpdateStats): nothing is counted twice. It starts no
// goroutines.
package statmetric

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Emit sends one sample of a metric: its value and its label values, in
// the order of the metric's label names.
type Emit func(v float64, labelValues ...string)

// Metric is one metric family read from a Stats value S.
type Metric[S any] struct {
	desc    *prometheus.Desc
	typ     prometheus.ValueType
	collect func(s S, emit Emit)
}

// Gauge is a gauge without labels.
func Gauge[S any](name, help string, v func(S) float64) Metric[S] {
	return Vec(name, help, prometheus.GaugeValue, nil, func(s S, emit Emit) { emit(v(s)) })
}

// Counter is a counter without labels; its name ends in _total.
func Counter[S any](name, help string, v func(S) uint64) Metric[S] {
	return Vec(name, help, prometheus.CounterValue, nil, func(s S, emit Emit) { emit(float64(v(s))) })
}

// Vec is a family with labels: each calls emit once per series (or not at
// all, for a family without series in s).
func Vec[S any](name, help string, typ prometheus.ValueType, labels []string, each func(s S, emit Emit)) Metric[S] {
	return Metric[S]{desc: prometheus.NewDesc(name, help, labels, nil), typ: typ, collect: each}
}

// Table is the metrics of one Stats type.
type Table[S any] []Metric[S]

// Describe sends the table's descriptions.
func (t Table[S]) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range t {
		ch <- m.desc
	}
}

// Collect sends the table's samples read from s. A sample that does not fit
// its description (a wrong number of label values) is sent as an invalid
// metric, which the registry reports as a gather error.
func (t Table[S]) Collect(s S, ch chan<- prometheus.Metric) {
	for _, m := range t {
		m.collect(s, func(v float64, labelValues ...string) {
			c, err := prometheus.NewConstMetric(m.desc, m.typ, v, labelValues...)
			if err != nil {
				c = prometheus.NewInvalidMetric(m.desc, err)
			}
			ch <- c
		})
	}
}

// Collector returns a prometheus.Collector of the table that reads one
// Stats snapshot from stats per Collect.
func (t Table[S]) Collector(stats func() S) prometheus.Collector {
	return &collector[S]{t: t, stats: stats}
}

type collector[S any] struct {
	t     Table[S]
	stats func() S
}

func (c *collector[S]) Describe(ch chan<- *prometheus.Desc) { c.t.Describe(ch) }
func (c *collector[S]) Collect(ch chan<- prometheus.Metric) { c.t.Collect(c.stats(), ch) }

// UnixSeconds is t as Unix seconds, or 0 when t is zero (a time that has
// not happened yet).
func UnixSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}

// Bool is 1 for true, 0 for false.
func Bool(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
