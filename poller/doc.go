// Package poller owns SNMP polling: the targets and profiles files
// (docs/configuration.md), the poll of one device with gosnmp, the poll
// cycle (concurrency, per-device timeout and retries, the cycle deadline,
// backoff of failing devices), the mapping of SNMP values to spool values,
// and the per-device status and per-cycle statistics.
//
// Each answered poll becomes one spool entry (key = target name), written
// with the Writer (a *spool.Spool) and then announced to the Sink (the
// in-memory index) at once. A Sink error, such as a full index, is counted
// and otherwise ignored: the entry is on disk, and the loader's next rescan
// indexes it. A device that does not answer produces no entry.
//
// Goroutines: Run starts one goroutine per cycle's worker (Options.Concurrency
// of them, all ended before the cycle returns) and nothing else; Cycle runs
// in the caller's goroutine plus those workers. When Run or Cycle returns,
// no goroutine of this package is left. gosnmp structs are never shared: each
// in-flight poll has its own, with its own UDP socket. A *Poller's methods
// are safe for concurrent use, but Run and Cycle must not overlap.
package poller
