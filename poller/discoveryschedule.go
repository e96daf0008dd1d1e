package poller

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/spoold/spoold/internal/statmetric"
)

// When discovery runs. A device's first poll and a poll that finds the
// agent restarted (sysUpTime went back) discover the device before its
// rows are polled: with no discovery, or one from before a restart that
// may have renumbered the rows, the rows' values would go to the wrong
// keys. A restart's discovery runs inline, in that poll's worker, within
// the cycle's deadline. A first discovery under Run runs beside the poll
// (firstDiscovery): the poll waits for it at most one response timeout,
// and a discovery that takes longer goes on across cycles, under its own
// deadline (DiscoveryTimeout), until it completes; meanwhile the device's
// polls go on without rows, and the other devices' polls are not held up.
// Rediscovery of a device in use — at every RediscoverInterval, after
// SetTargets (SIGHUP), and at once when a poll sees noSuchInstance for a
// known row — runs in the background, beside the cycles (Run's discovery
// goroutine), and swaps the device's plan when it completes: a cycle
// always uses the last completed discovery, and never waits for one.

// DiscoveryStats count discoveries since the Poller was made.
type DiscoveryStats struct {
	Discoveries uint64 `json:"discoveries"` // completed
	Failures    uint64 `json:"failures"`    // ended by an error (the last plan stays in use)
	Requests    uint64 `json:"requests"`    // SNMP requests they sent
	// Rows, Filtered and Gone are the polled rows, those filters dropped
	// and those known before but not found, summed over the devices'
	// last discoveries. Truncated counts tables cut at MaxTableRows.
	Rows      uint64 `json:"rows"`
	Filtered  uint64 `json:"filtered"`
	Gone      uint64 `json:"gone"`
	Truncated uint64 `json:"truncated"`
	// OverLimit are the rows the bounds on files refused, summed over the
	// devices' last discoveries (filebound.go).
	OverLimit uint64 `json:"over_limit"`
	Running   int    `json:"running"` // in flight now

	// EmptyTables are the tables without a row of answering devices, by
	// their last discoveries (DeviceStatus.EmptyTables).
	EmptyTables uint64 `json:"empty_tables"`
}

type discCounters struct {
	discoveries, failures, requests atomic.Int64
	running                         atomic.Int64
}

// DiscoveryStats returns the discovery counters and the rows of the
// devices' last discoveries.
func (p *Poller) DiscoveryStats() DiscoveryStats {
	s := DiscoveryStats{
		Discoveries: uint64(p.disc.discoveries.Load()), Failures: uint64(p.disc.failures.Load()),
		Requests: uint64(p.disc.requests.Load()), Running: int(p.disc.running.Load()),
	}
	p.mu.RLock()
	devs := p.devices
	p.mu.RUnlock()
	for _, d := range devs {
		d.mu.Lock()
		s.Rows += uint64(d.st.Rows)
		s.Filtered += uint64(d.st.FilteredRows)
		s.Gone += uint64(len(d.st.GoneRows))
		s.Truncated += uint64(d.st.TruncatedTables)
		s.OverLimit += uint64(d.st.OverLimitRows)
		s.EmptyTables += uint64(len(d.st.EmptyTables))
		d.mu.Unlock()
	}
	return s
}

var discoveryMetrics = statmetric.Table[DiscoveryStats]{
	statmetric.Counter("spoold_poller_discoveries_total", "Table discoveries completed.", func(s DiscoveryStats) uint64 { return s.Discoveries }),
	statmetric.Counter("spoold_poller_discovery_failures_total", "Table discoveries ended by an error (the device's last discovery stays in use).", func(s DiscoveryStats) uint64 { return s.Failures }),
	statmetric.Counter("spoold_poller_discovery_requests_total", "SNMP requests sent by table discoveries.", func(s DiscoveryStats) uint64 { return s.Requests }),
	statmetric.Gauge("spoold_poller_table_rows", "Table rows polled, by the devices' last discoveries.", func(s DiscoveryStats) float64 { return float64(s.Rows) }),
	statmetric.Gauge("spoold_poller_table_rows_filtered", "Table rows a filter dropped, by the devices' last discoveries.", func(s DiscoveryStats) float64 { return float64(s.Filtered) }),
	statmetric.Gauge("spoold_poller_table_rows_gone", "Table rows an earlier discovery found and the last did not (their files stay).", func(s DiscoveryStats) float64 { return float64(s.Gone) }),
	statmetric.Gauge("spoold_poller_tables_truncated", "Tables with more rows than --poll-max-table-rows, by the devices' last discoveries.", func(s DiscoveryStats) float64 { return float64(s.Truncated) }),
	statmetric.Gauge("spoold_poller_table_rows_over_limit", "Table rows not polled because their target is at --max-files-per-target or --max-new-files-per-hour, by the devices' last discoveries.", func(s DiscoveryStats) float64 { return float64(s.OverLimit) }),
	statmetric.Gauge("spoold_poller_tables_empty", "Tables without a row of devices that answer, by the devices' last discoveries.", func(s DiscoveryStats) float64 { return float64(s.EmptyTables) }),
	statmetric.Gauge("spoold_poller_discoveries_running", "Table discoveries in flight.", func(s DiscoveryStats) float64 { return float64(s.Running) }),
}

// NewDiscoveryCollector returns a prometheus.Collector of
// Poller.DiscoveryStats.
func NewDiscoveryCollector(stats func() DiscoveryStats) prometheus.Collector {
	return discoveryMetrics.Collector(stats)
}

// Discover discovers now, with at most DiscoveryConcurrency at once, the
// tables of every device that has tables and needs a rediscovery (due by
// RediscoverInterval, after SetTargets, or flagged by a poll; a device
// never discovered is discovered by its first poll), or of every device
// with tables if all is set. It returns the
// devices discovered and those that failed. It may run beside a Cycle.
func (p *Poller) Discover(ctx context.Context, all bool) (ok, failed int) {
	p.mu.RLock()
	devs := p.devices
	p.mu.RUnlock()
	now := p.now()
	var due []*device
	for _, d := range devs {
		if len(d.t.Profile.Tables) > 0 && (all || p.discoveryDue(d, now)) {
			due = append(due, d)
		}
	}
	var nok, nfail atomic.Int64
	eachDevice(due, p.opts.DiscoveryConcurrency, func(d *device) {
		if ctx.Err() != nil {
			return
		}
		if err := p.discoverDevice(ctx, d); err != nil {
			nfail.Add(1)
		} else {
			nok.Add(1)
		}
	})
	return int(nok.Load()), int(nfail.Load())
}

// discoveryDue reports whether d needs a rediscovery now. A device never
// discovered is discovered by its next poll (inline: so a background one
// does not race the first cycle); a device in backoff waits for its polls
// to succeed again.
func (p *Poller) discoveryDue(d *device, now time.Time) bool {
	if d.plan.Load().disc == nil || d.failures() >= p.opts.BackoffAfter {
		return false
	}
	if d.rediscover.Load() {
		return true
	}
	iv := p.opts.RediscoverInterval
	return iv > 0 && now.Sub(d.plan.Load().disc.At) >= iv
}

// discoverDevice discovers d's tables and swaps in the plan of what it
// found; on an error d keeps its plan and is tried again when next due.
// Two discoveries of one device never overlap: the second returns at once.
func (p *Poller) discoverDevice(ctx context.Context, d *device) error {
	if !d.discovering.CompareAndSwap(false, true) {
		return nil
	}
	defer d.discovering.Store(false)
	caller := ctx
	if p.opts.DiscoveryTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.opts.DiscoveryTimeout)
		defer cancel()
	}
	p.disc.running.Add(1)
	defer p.disc.running.Add(-1)
	d.rediscover.Store(false)
	disc, err := p.discover(ctx, d)
	err = p.explain(d, err, false)
	now := p.now()
	if err != nil {
		d.rediscover.Store(true)
		p.disc.failures.Add(1)
		p.logDiscoveryError(caller, d, err, now)
		return err
	}
	p.disc.discoveries.Add(1)
	d.carryTold.Store(false)
	d.measured(disc.Duration, disc.Requests, 1)
	refused, why := d.admitRows(disc, now, &p.opts)
	if refused > 0 {
		p.log.Warn("table rows not polled: the target is at its bound on files", "target", d.t.Name, "rows", refused, "reason", why)
	}
	d.plan.Store(newPlan(d.t, disc, d.plan.Load(), &p.opts))
	d.recordDiscovery(disc, now, refused, why)
	p.noteEmptyTables(d, disc)
	p.log.Debug("discovered tables", "target", d.t.Name, "rows", len(disc.Keys()), "requests", disc.Requests, "seconds", disc.Duration.Seconds())
	return nil
}

// logDiscoveryError records d's failed discovery in its status and logs
// it when it says something new: not the same error again, not while d is
// down (its "device down" line says so), not when the caller's ctx cut
// it short (a stop, the cycle's deadline: it is tried again).
func (p *Poller) logDiscoveryError(caller context.Context, d *device, err error, now time.Time) {
	d.mu.Lock()
	again := d.st.DiscoveryError == err.Error()
	down := d.st.ConsecutiveFailures > 0
	d.st.DiscoveryError, d.st.LastDiscoveryError = err.Error(), now
	d.mu.Unlock()
	if again || down || caller.Err() != nil {
		p.log.Debug("discover tables", "target", d.t.Name, "err", err)
		return
	}
	p.log.Warn("discover tables", "target", d.t.Name, "err", err)
}

// carrier is where Run carries on the first discoveries that outlast
// their poll: under Run's context, at most Concurrency at once (one UDP
// socket each), each in a goroutine that Run waits for before it returns.
type carrier struct {
	ctx   context.Context
	wg    sync.WaitGroup
	slots chan struct{}
}

// firstDiscovery discovers d, never discovered yet, for the poll about to
// run with the cycle's context cctx; the caller loads d's plan after it.
// Cycle alone (without Run) discovers inline, cut at the cycle's deadline.
// Under Run the discovery runs in a goroutine of its own, under Run's
// context and DiscoveryTimeout, not the cycle's deadline: the poll waits
// for it at most one response timeout of d (what an unanswered request
// would hold the worker), then goes on with the plan d has, and the
// discovery goes on across cycles until it completes or fails (then the
// next poll starts another). A poll that finds it still running does not
// wait. With Concurrency discoveries carried already, it discovers inline
// for no longer than that wait (a quick one completes; a slow one is tried
// again by the next poll).
func (p *Poller) firstDiscovery(cctx context.Context, d *device) {
	c := p.carry.Load()
	if c == nil {
		p.discoverDevice(cctx, d)
		return
	}
	if d.discovering.Load() {
		return
	}
	wait := p.timeout(d.t)
	select {
	case c.slots <- struct{}{}:
	default: // every slot carries a discovery: one inline, for no longer than the wait
		ctx, cancel := context.WithTimeout(cctx, wait)
		defer cancel()
		p.discoverDevice(ctx, d)
		return
	}
	done := make(chan struct{})
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() { <-c.slots }()
		defer close(done)
		p.discoverDevice(c.ctx, d)
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-done:
		return
	case <-timer.C:
	case <-cctx.Done():
	}
	if !d.carryTold.Swap(true) { // once until a discovery of d completes
		p.log.Info("first discovery takes longer than a poll: it goes on beside the poll cycles, and the device's rows are polled once it completes", "target", d.t.Name)
	}
}

// recordDiscovery updates d's status with what disc found: its rows, the
// rows its bounds on files refused (and why), and the rows admitted by
// earlier discoveries that it did not find (gone: their files stay, and
// their keys come back if the rows do).
func (d *device) recordDiscovery(disc *Discovery, now time.Time, overLimit int, why string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := &d.st
	s.LastDiscovery, s.DiscoveryError = now, ""
	s.Discoveries++
	s.Rows, s.FilteredRows, s.TruncatedTables = 0, 0, 0
	s.OverLimitRows, s.OverLimit = overLimit, why
	found := map[string]bool{}
	for _, t := range disc.Tables {
		s.Rows += len(t.Rows)
		s.FilteredRows += len(t.Filtered)
		if t.Truncated {
			s.TruncatedTables++
		}
		for _, r := range t.Rows {
			found[r.Key] = true
		}
	}
	s.GoneRows = s.GoneRows[:0:0]
	for _, k := range d.known { // in key order
		if !found[k] {
			s.GoneRows = append(s.GoneRows, k)
		}
	}
}

// discoveryLoop runs the background discoveries of Run: at each wake-up
// (a cycle's start and end), those of the devices due. It returns when ctx
// is done and its discoveries have ended.
func (p *Poller) discoveryLoop(ctx context.Context, wake <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
			p.Discover(ctx, false)
		}
	}
}

// wakeDiscovery asks Run's discovery goroutine to look for due devices;
// it never blocks (a wake-up pending is enough).
func (p *Poller) wakeDiscovery() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}
