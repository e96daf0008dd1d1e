package rrdcached

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Refusal reasons, the values of spoold_rrdcached_refusals_total's reason
// label.
const (
	RefuseMaxConns         = "max_connections"          // Options.MaxConns reached
	RefuseListenerMaxConns = "max_listener_connections" // ListenerOptions.MaxConns reached
	RefuseLineTooLong      = "line_too_long"            // a line over Options.MaxLine
	RefuseBatchTooLarge    = "batch_too_large"          // a BATCH over Options.MaxBatch
	RefuseBatchErrors      = "batch_errors_too_large"   // a BATCH's error lines over Options.MaxBatchErrorBytes
	RefuseIdleTimeout      = "idle_timeout"             // no full line within Options.IdleTimeout
	RefuseWriteTimeout     = "write_timeout"            // a reply not taken within Options.WriteTimeout
	RefusePermission       = "permission"               // a command the listener does not allow
	RefusePath             = "path"                     // a file name PathResolver refused
	RefuseBrokenCommand    = "broken_command"           // a command word ending in a lone backslash
	RefuseFetchTooLarge    = "fetch_too_large"          // a FETCH over Options.MaxFetchBytes
)

// refusalReasons are the Refuse constants, in the order the metric's help
// lists them.
var refusalReasons = []string{RefuseMaxConns, RefuseListenerMaxConns, RefuseLineTooLong,
	RefuseBatchTooLarge, RefuseBatchErrors, RefuseIdleTimeout, RefuseWriteTimeout,
	RefusePermission, RefusePath, RefuseBrokenCommand, RefuseFetchTooLarge}

// metrics are the server's client_golang metrics.
type metrics struct {
	connections *prometheus.CounterVec // by listener
	open        *prometheus.GaugeVec   // by listener
	commands    *prometheus.CounterVec // by command, result
	refusals    *prometheus.CounterVec // by reason, listener
	batchSize   prometheus.Histogram
	// fetchesWaiting are the FETCH commands waiting for a slot.
	fetchesWaiting prometheus.Gauge

	// byCommand are commands' counters by command name, then ok and
	// error, looked up once (WithLabelValues hashes the labels each call).
	byCommand map[string][2]prometheus.Counter
}

// command counts one command named name (a table name or "unknown").
func (m *metrics) command(name string, ok bool) {
	i := 1
	if ok {
		i = 0
	}
	m.byCommand[name][i].Inc()
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		connections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "spoold_rrdcached_connections_total",
			Help: "Connections accepted by the rrdcached protocol server, by listener (refused ones too).",
		}, []string{"listener"}),
		open: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "spoold_rrdcached_open_connections",
			Help: "Connections of the rrdcached protocol server open now, by listener.",
		}, []string{"listener"}),
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "spoold_rrdcached_commands_total",
			Help: "rrdcached protocol commands by command word (\"unknown\" for words not in rrdcached's table) and result (ok, error).",
		}, []string{"command", "result"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "spoold_rrdcached_refusals_total",
			Help: "What the rrdcached protocol server refused, by reason (" + strings.Join(refusalReasons, ", ") + ") and listener.",
		}, []string{"reason", "listener"}),
		fetchesWaiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "spoold_rrdcached_fetches_waiting",
			Help: "FETCH and FETCHBIN commands waiting for their turn: the server carries out a bounded number at once.",
		}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "spoold_rrdcached_batch_commands",
			Help:    "Commands per finished BATCH.",
			Buckets: prometheus.ExponentialBuckets(1, 4, 10),
		}),
	}
	m.byCommand = map[string][2]prometheus.Counter{}
	for _, name := range append(CommandNames(), "unknown") {
		m.byCommand[name] = [2]prometheus.Counter{m.commands.WithLabelValues(name, "ok"), m.commands.WithLabelValues(name, "error")}
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.connections, m.open, m.commands, m.refusals, m.batchSize, m.fetchesWaiting} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
