package admin

import (
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// BenchmarkMetricsGather gathers /metrics of a fleet of 4,000 targets, as
// a scrape does once the kept gathering is older than --admin-status-cache:
// B/op and allocs/op are the garbage each scrape gives the collector.
func BenchmarkMetricsGather(b *testing.B) {
	targets := make([]TargetStatus, 4000)
	for i := range targets {
		targets[i] = okTarget(fmt.Sprintf("device-%04d", i))
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCollector(newFakeDaemon(targets...), nil))
	b.ReportAllocs()
	for b.Loop() {
		mfs, err := reg.Gather()
		if err != nil || len(mfs) == 0 {
			b.Fatalf("gather: %d families, %v", len(mfs), err)
		}
	}
}
