// Package simulate is a simulated fleet of SNMP agents for demos, tests and
// benchmarks (`spoold simulate`): one UDP socket on a loopback address
// answers SNMP v1 and v2c Get, GetNext and GetBulk requests for any number
// of devices, the community selecting the device as in snmpsim. Requests
// and responses are encoded and decoded by gosnmp's own packet codec.
// SNMPv3 is not spoken (requests are counted as decode errors and get no
// answer): tests of v3 use net-snmp's snmpd.
//
// Each device serves the system group, IF-MIB's ifTable and ifXTable (one
// row per interface: names, types, speeds, status, 32- and 64-bit
// counters, aliases), HOST-RESOURCES (hrStorageTable, hrProcessorLoad) and
// UCD (laTable, memory, CPU time) objects. Interfaces are numbered 1..n
// (Contiguous) or as real gear numbers them (Vendor: Catalyst, Junos and
// NX-OS layouts, with ifIndexes such as 1, 2, 10101... or 436207616...).
//
// Every value a device serves is a known function of the device, the OID
// and the time (Fleet.Value, Fleet.Walk, Fleet.Interfaces, Fleet.Rate), so
// a test can compute what a poller must have read. The clock is
// injectable (Options.Now). Devices can be dead (never answer), slow
// (answer after a delay), have counters that wrap a known time after boot,
// restart periodically or on demand (sysUpTime goes back and the counters
// restart), miss OIDs (noSuchObject and noSuchInstance), lack the 64-bit
// counters, and renumber their interfaces at each restart (an ifName moves
// to another ifIndex; its rates follow the name). A fraction of each
// device's interfaces can be down, their counters flat. Which devices
// misbehave is a deterministic, evenly spread function of their index and
// the fractions in Options, and can be overridden per device.
//
// GetNext and GetBulk walk the device's MIB view in lexicographic OID
// order: the view is built once per device shape (layout, missing columns
// or rows), sorted, and shared by every device of that shape; a request
// is a binary search. Responses are bounded as an agent bounds them
// (Options.MaxMessageSize, Options.MaxBulkVarbinds): a GetBulk response is
// cut short, another becomes tooBig.
//
// Goroutines: Serve runs Options.Workers readers of the socket, and a
// timer-driven goroutine per delayed response in flight; all of them have
// ended when Serve returns. Close ends Serve and is safe to call twice.
package simulate
