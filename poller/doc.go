// Package poller polls SNMP devices: the poll of one device with gosnmp
// (Gets, or GetBulk walks of a table's columns), the plan of what one poll
// asks for, the poll cycle (concurrency, per-device timeout and retries,
// the cycle deadline, backoff of failing devices), the discovery of the
// tables of profiles (the rows, their filters and keys) and when it runs,
// the one-off walk `spoold walk` shows, the mapping of SNMP values to
// spool values, and the per-device status and per-cycle statistics. What
// is polled (targets, profiles, tables, keys, shards) is package fleet's.
//
// Each answered poll becomes one spool entry per key (fleet's key model):
// the scalars' entry and one per discovered row, each through package
// intake: appended with the SpoolAppender (a *spool.Spool), then the
// segment it starts added to the Sink (the in-memory index). A Sink error, such as a full index, is
// counted and otherwise ignored: the entry is on disk, and the loader's
// next rescan indexes it. A device that does not answer produces no entry.
//
// Goroutines: Run starts one discovery goroutine (discoveryschedule.go),
// which runs the background discoveries of the devices due with at most
// Options.DiscoveryConcurrency workers; for each cycle, Options.Concurrency
// workers, all ended before the cycle returns, and for a poll spread over
// lanes (lanes.go) one goroutine per lane, ended before the poll returns;
// and one goroutine per first discovery that outlasts its poll (at most
// Options.Concurrency at once), which goes on across cycles until it
// completes. Run returns once all of them have ended. Cycle runs in the
// caller's goroutine plus its workers (without Run, a first discovery
// runs inline), Discover in the caller's plus its discovery workers; Walk
// starts none. When Run, Cycle or Discover returns, no goroutine it
// started is left. gosnmp structs are never shared: each in-flight poll
// (each lane of one) or discovery has its own, with its own UDP socket. A *Poller's methods are safe for concurrent use, but Run and
// Cycle must not overlap.
package poller
