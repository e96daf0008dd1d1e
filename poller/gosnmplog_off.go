//go:build gosnmp_nodebug

package poller

// GoSNMPLogging: gosnmp's debug logging is compiled out (gosnmplog.go).
const GoSNMPLogging = false
