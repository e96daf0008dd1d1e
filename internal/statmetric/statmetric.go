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
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Emit sends one sample of a metric: its value and its label values, in
// the order of the metric's label names.
type Emit func(v float64, labelValues ...string)

// Metric is one metric family read from a Stats value S.
type Metric[S any] struct {
	desc    *prometheus.Desc
	typ     prometheus.ValueType
	labels  []string // the label names, in the order of the values emitted
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
	return Metric[S]{desc: prometheus.NewDesc(name, help, labels, nil), typ: typ, labels: labels, collect: each}
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
// metric, which the registry reports as a gather error. The samples of one
// Collect share their label pairs: the families of a fleet's targets
// label thousands of series with the same target names, and a scrape
// made each series its own pairs (prometheus.NewConstMetric).
func (t Table[S]) Collect(s S, ch chan<- prometheus.Metric) {
	var pairs labelPairs
	for _, m := range t {
		m.collect(s, func(v float64, labelValues ...string) {
			if len(labelValues) != len(m.labels) {
				ch <- prometheus.NewInvalidMetric(m.desc, fmt.Errorf("%d label values for the %d labels %q", len(labelValues), len(m.labels), m.labels))
				return
			}
			ch <- &sample{desc: m.desc, typ: m.typ, v: v, labels: pairs.of(m.labels, labelValues)}
		})
	}
}

// sample is one series' value: a prometheus.Metric whose label pairs are
// shared with the other samples of its Collect (labelPairs).
type sample struct {
	desc   *prometheus.Desc
	typ    prometheus.ValueType
	v      float64
	labels []*dto.LabelPair
}

func (m *sample) Desc() *prometheus.Desc { return m.desc }

func (m *sample) Write(out *dto.Metric) error {
	out.Label = m.labels
	switch m.typ {
	case prometheus.CounterValue:
		out.Counter = &dto.Counter{Value: &m.v}
	case prometheus.GaugeValue:
		out.Gauge = &dto.Gauge{Value: &m.v}
	default:
		out.Untyped = &dto.Untyped{Value: &m.v}
	}
	return nil
}

// labelPairs makes the label pairs of one Collect's samples, each pair
// once, kept as the list of that pair alone (a one-label sample's); a list
// of several is sorted by name (the registry would sort a copy of it). The
// registry checks the names and values, and changes no sample's pairs.
type labelPairs map[[2]string][]*dto.LabelPair

func (c *labelPairs) of(names, values []string) []*dto.LabelPair {
	switch len(names) {
	case 0:
		return nil
	case 1:
		return c.get(names[0], values[0])
	}
	l := make([]*dto.LabelPair, len(names))
	for i := range names {
		l[i] = c.get(names[i], values[i])[0]
	}
	slices.SortFunc(l, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
	return l
}

// get returns the list of the one pair name=value.
func (c *labelPairs) get(name, value string) []*dto.LabelPair {
	if l, ok := (*c)[[2]string{name, value}]; ok {
		return l
	}
	if *c == nil {
		*c = make(labelPairs)
	}
	n, v := name, value
	l := []*dto.LabelPair{{Name: &n, Value: &v}}
	(*c)[[2]string{name, value}] = l
	return l
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
