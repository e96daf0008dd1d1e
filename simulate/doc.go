// Package simulate is a simulated fleet of SNMP agents for demos, tests and
// benchmarks (`spoold simulate`): one UDP socket on a loopback address
// answers SNMP v1 and v2c Get requests for any number of devices, the
// community selecting the device as in snmpsim. Requests and responses are
// encoded and decoded by gosnmp's own packet codec.
//
// Every value a device serves is a known function of the device, the OID
// and the time (Fleet.Value), so a test can compute what a poller must have
// read. The clock is injectable (Options.Now). Devices can be dead (never
// answer), slow (answer after a delay), have counters that wrap a known time
// after boot, restart periodically or on demand (sysUpTime goes back and
// the counters restart from zero), and miss OIDs (noSuchObject and
// noSuchInstance). Which devices misbehave is a deterministic, evenly spread
// function of their index and the fractions in Options, and can be
// overridden per device.
//
// Goroutines: Serve runs Options.Workers readers of the socket, and a
// timer-driven goroutine per delayed response in flight; all of them have
// ended when Serve returns. Close ends Serve and is safe to call twice.
package simulate
