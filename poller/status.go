package poller

import (
	"time"
)

// DeviceStatus is what the poller knows about one device, under the
// names /status shows it by (the admin server embeds it).
type DeviceStatus struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	Profile string `json:"profile"`
	// LastPoll is when the last poll ended, answered or not; zero before
	// the first. LastSuccess is the last answered one's.
	LastPoll    time.Time `json:"last_poll"`
	LastSuccess time.Time `json:"last_success"`
	// LastError is the last poll's error; empty after a success.
	LastError     string    `json:"last_error"`
	LastErrorTime time.Time `json:"last_error_time"`
	// RTT is the duration of the last answered poll (all its Gets).
	RTT time.Duration `json:"rtt_seconds"`
	// ConsecutiveFailures counts polls without an answer since the last
	// success; from Options.BackoffAfter on, the device is in backoff.
	ConsecutiveFailures int `json:"consecutive_failures"`
	// SkipCycles is the cycles the device will sit out before its next probe.
	SkipCycles int `json:"skip_cycles"`
	// Unknown is the unknown values of the last answered poll.
	Unknown int `json:"unknown"`
	// Polls, Failures and Restarts count since the device was added;
	// Restarts are polls flagged with spool.FlagDiscontinuity.
	Polls    uint64 `json:"polls"`
	Failures uint64 `json:"failures"`
	Restarts uint64 `json:"restarts"`

	// Tables (profiles with tables only). LastDiscovery is when the last
	// discovery completed; DiscoveryError the error of the last one that
	// failed after it (empty if none), at LastDiscoveryError.
	LastDiscovery      time.Time `json:"last_discovery"`
	DiscoveryError     string    `json:"discovery_error"`
	LastDiscoveryError time.Time `json:"last_discovery_error"`
	Discoveries        uint64    `json:"discoveries"`
	// Rows are the rows polled (the last discovery's), FilteredRows those
	// its filters dropped, TruncatedTables its tables cut at
	// Options.MaxTableRows. GoneRows are the keys of rows an earlier
	// discovery found and the last did not: their files stay.
	Rows            int      `json:"rows"`
	FilteredRows    int      `json:"filtered_rows"`
	TruncatedTables int      `json:"truncated_tables"`
	GoneRows        []string `json:"gone_rows"`
	// OverLimitRows are the rows of the last discovery not polled because
	// the target is at a bound on its files (filebound.go); OverLimit says
	// which, empty when none. The target needs an operator's look.
	OverLimitRows int    `json:"over_limit_rows"`
	OverLimit     string `json:"over_limit"`
	// EmptyTables are the profile's tables in which the last discovery
	// found no row: the device answers, but none of the columns walked
	// (TableDiscovery.Walked). The target needs an operator's look.
	EmptyTables []string `json:"empty_tables"`
}

// CycleStats describe one poll cycle.
type CycleStats struct {
	Seq      uint64        `json:"seq"`
	Start    time.Time     `json:"start"`
	Duration time.Duration `json:"duration_seconds"`
	// Devices is the number of targets; every one of them is counted in
	// exactly one of OK, Failed, Skipped, Overrun and Stopped.
	Devices int `json:"devices"`
	OK      int `json:"ok"`      // answered; an entry was written (or a write was attempted)
	Failed  int `json:"failed"`  // no answer: timeout, refused, authentication
	Skipped int `json:"skipped"` // sat this cycle out in backoff
	Overrun int `json:"overrun"` // not polled, or cut short, by the cycle deadline
	Stopped int `json:"stopped"` // not polled, or cut short, because the poller was stopped
	// Values are the values written; Unknown the unknown ones among them.
	Values  int `json:"values"`
	Unknown int `json:"unknown"`
	// Discontinuities are entries flagged with spool.FlagDiscontinuity.
	Discontinuities int `json:"discontinuities"`
	// WriteErrors are answered polls whose entry could not be written.
	WriteErrors int `json:"write_errors"`
	// IndexDeferred are entries the Sink refused (they wait on disk for a
	// rescan).
	IndexDeferred int `json:"index_deferred"`
	// Failed polls by kind: Timeouts had no usable answer in time (silent,
	// someone else's request id, too late: gosnmp drops what it cannot
	// match and waits on); Malformed answered with bytes that do not parse
	// as SNMP; AgentErrors answered with an error status for the whole
	// request; OtherErrors are the rest (refused, ...).
	Timeouts    int `json:"timeouts"`
	Malformed   int `json:"malformed"`
	AgentErrors int `json:"agent_errors"`
	OtherErrors int `json:"other_errors"`
	// WrongTypes are varbinds of answered polls whose SNMP type cannot be
	// their data source's value (text for a counter, an IpAddress, an OID,
	// a NaN float): stored as unknown, counted in Unknown too.
	WrongTypes int `json:"wrong_types"`
	// Requests are the SNMP requests of answered polls (Gets and GetBulks,
	// not discoveries); Rows the table rows' entries written. StaleRows
	// are rows not written because the agent restarted and could not be
	// discovered again (their indexes may name other rows now).
	Requests  int `json:"requests"`
	Rows      int `json:"rows"`
	StaleRows int `json:"stale_rows"`
	// InFlightMax is the most polls that were in flight at once (at most
	// Options.Concurrency); InFlightLimit the limit of polls counted in
	// flight the cycle ended with, which the next starts at (gate.go).
	InFlightMax   int `json:"in_flight_max"`
	InFlightLimit int `json:"in_flight_limit"`
}

// Status returns the status of the named device.
func (p *Poller) Status(name string) (DeviceStatus, bool) {
	p.mu.RLock()
	d := p.byName[name]
	p.mu.RUnlock()
	if d == nil {
		return DeviceStatus{}, false
	}
	return d.status(), true
}

// Statuses returns the status of every device, in targets order.
func (p *Poller) Statuses() []DeviceStatus {
	p.mu.RLock()
	devs := p.devices
	p.mu.RUnlock()
	out := make([]DeviceStatus, len(devs))
	for i, d := range devs {
		out[i] = d.status()
	}
	return out
}

// LastCycle returns the stats of the last finished cycle (zero before the
// first).
func (p *Poller) LastCycle() CycleStats {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.last
}

func (d *device) status() DeviceStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := d.st
	s.Name, s.Address, s.Profile = d.t.Name, d.t.Address(), d.t.Profile.Name
	s.GoneRows = append([]string(nil), s.GoneRows...)
	return s
}

// backoffSkips returns how many cycles a device sits out after its n-th
// consecutive failure: none before after failures, then 1, 2, 4... up to
// max.
func backoffSkips(n, after, max int) int {
	if n < after {
		return 0
	}
	k := n - after
	if k > 30 {
		k = 30
	}
	s := 1 << k
	if s > max {
		s = max
	}
	return s
}

// Discovery returns the last completed discovery of the named device's
// tables (its rows: index, instance name, key), false if it has none yet.
// It is shared: read it, do not change it.
func (p *Poller) Discovery(name string) (*Discovery, bool) {
	p.mu.RLock()
	d := p.byName[name]
	p.mu.RUnlock()
	if d == nil {
		return nil, false
	}
	disc := d.plan.Load().disc
	return disc, disc != nil
}
