package rrdcached

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestRefusalsHelpNamesEveryReason: the refusal metric's help lists the
// reasons an operator sees in its label, in the words of /metrics.
func TestRefusalsHelpNamesEveryReason(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := newMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.refusals.WithLabelValues(RefusePath, "unix:/x").Inc()
	want := `# HELP spoold_rrdcached_refusals_total What the rrdcached protocol server refused, by reason (max_connections, max_listener_connections, line_too_long, batch_too_large, batch_errors_too_large, idle_timeout, write_timeout, permission, path, broken_command, fetch_too_large) and listener.
# TYPE spoold_rrdcached_refusals_total counter
spoold_rrdcached_refusals_total{listener="unix:/x",reason="path"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "spoold_rrdcached_refusals_total"); err != nil {
		t.Error(err)
	}
}
