//go:build !gosnmp_nodebug

package poller

// GoSNMPLogging reports that gosnmp was built with its debug logging (the
// build tag gosnmp_nodebug was not given). gosnmp then formats its calls
// to a logger for every variable it decodes, even with no logger set (a
// boxed argument each, 105.6 allocations an interface and poll against
// 40.8, BenchmarkPollBytes); spoold never sets one. make builds and tests
// with the tag (scripts/gotags); the daemon warns at start without it.
const GoSNMPLogging = true
