// Package poller owns SNMP polling: the targets and profiles files
// (docs/configuration.md), the tables of profiles and their discovery, the
// poll of one device with gosnmp, the poll cycle (concurrency, per-device
// timeout and retries, the cycle deadline, backoff of failing devices), the
// mapping of SNMP values to spool values, and the per-device status and
// per-cycle statistics.
//
// # Keys
//
// A key is an RRD file (DESIGN.md decision 9). A profile's scalars ("ds"
// lines) go to the target's own key, the target name. Each row of a
// profile's table ("table" blocks) is its own key: RowKey(target,
// segment), "target/segment", or "target/subdir/segment" for a table with
// a subdir line; segment is InstanceSegment of the row's instance name
// (ifName, ifDescr, ifAlias, any column, or the index), a one-to-one
// escape into [A-Za-z0-9._-] that rrd.RRDPath keeps as it is, so the
// file is <rrd-dir>/<target>/<segment>.rrd. Identity follows the instance
// name, not the index. key.go states the mapping, its empty-name and
// collision rules; Target.KeyDS gives a key's data sources (for
// rrdwriter's Options.Layout); SplitKey and InstanceName take a key
// apart. No poller key starts with "/".
//
// Each answered poll becomes one spool entry per key: the scalars' entry
// and one per discovered row, written with the Writer (a *spool.Spool) and
// then announced to the Sink (the in-memory index) at once. A Sink error,
// such as a full index, is counted and otherwise ignored: the entry is on
// disk, and the loader's next rescan indexes it. A device that does not
// answer produces no entry.
//
// Goroutines: Run starts one goroutine per cycle's worker (Options.Concurrency
// of them, all ended before the cycle returns), its background discovery
// goroutine and the workers of its discoveries, and one goroutine per
// first discovery that outlasts its poll (at most Options.Concurrency at
// once; discovery.go); Cycle runs in the caller's goroutine plus its
// workers. When Run or Cycle returns, no goroutine of this package is
// left. gosnmp structs are never shared: each
// in-flight poll has its own, with its own UDP socket. A *Poller's methods
// are safe for concurrent use, but Run and Cycle must not overlap.
package poller
