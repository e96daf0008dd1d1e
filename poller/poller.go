package poller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/intake"
	"github.com/spoold/spoold/spool"
)

// Poller polls a set of targets in cycles and writes one spool entry per
// answered poll.
type Poller struct {
	opts Options
	sp   SpoolAppender
	in   *intake.Intake // sp's appends, then the sink's Add
	log  *slog.Logger
	now  func() time.Time

	running atomic.Bool // a cycle is in progress
	mu      sync.RWMutex
	devices []*device
	byName  map[string]*device
	inFile  int // targets given to SetTargets, before Options.Shard's selection
	last    CycleStats
	seq     uint64
	// problems are the kinds of failure last logged; only Cycle touches
	// them (cycles never overlap).
	problems cycleProblems

	disc  discCounters
	wake  chan struct{}           // to Run's discovery goroutine
	carry atomic.Pointer[carrier] // Run's, while it runs (discoveryschedule.go)
	// gateLimit is the limit of polls in flight the last cycle ended
	// with (gate.go): the next one starts at it.
	gateLimit atomic.Int64
	gateStall atomic.Int64           // and how long a poll counted against it (ns)
	idleCPU   func() (float64, bool) // the gate's CPU reading, if not /proc/stat's (tests)

	clients sync.Pool // *gosnmp.GoSNMP of finished polls (clients.go)
	results sync.Pool // *pollMemory of finished polls (poll.go)
}

// device is a target and what the poller keeps about it between cycles.
// Its uptime state is touched only by the one worker polling it; its v3
// engine state (usm) by that worker and a discovery beside it, under
// usmMu; st and known are guarded by mu for readers of Status.
type device struct {
	t    *fleet.Target
	plan atomic.Pointer[pollPlan] // never nil: the scalars', then the last discovery's

	rediscover  atomic.Bool               // a discovery is due (SetTargets, a lost row, a failed discovery)
	discovering atomic.Bool               // a discovery is in flight
	carryTold   atomic.Bool               // a first discovery carried beside the cycles was logged; none completed since
	known       []string                  // row keys any discovery admitted, sorted (filebound.go); guarded by mu
	newFiles    tokenBucket               // the new row keys it may still admit; guarded by mu
	states      atomic.Pointer[rowStates] // the rows' ifOperStatus at the last answered poll (rows.go)
	perRequest  atomic.Int64              // time per request of its last answered poll or discovery, ns (lanes.go)

	usmMu sync.Mutex
	usm   *gosnmp.UsmSecurityParameters // v3 engine state from the last poll
	usmAt time.Time
	// v3Raw is the last "not authentic" error of a v3 poll and v3Unknown
	// what asking the agent found for it (Poller.unknownUser), guarded by
	// usmMu: the agent is asked again only when the error changes.
	v3Raw     string
	v3Unknown bool

	lastUptime uint32
	lastAt     time.Time // time of the last answered poll with an uptime
	hasUptime  bool

	mu sync.Mutex
	st DeviceStatus
}

// New returns a poller of targets that appends entries with sp and adds
// them to sink (nil: no index). logger nil discards logs. It starts nothing.
func New(opts Options, targets []*fleet.Target, sp SpoolAppender, sink Sink, logger *slog.Logger) (*Poller, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if sp == nil {
		return nil, errors.New("create poller: no spool appender")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := &Poller{opts: opts, sp: sp, in: intake.New(sp, sink), log: logger, now: opts.Now, wake: make(chan struct{}, 1)}
	if p.now == nil {
		p.now = time.Now
	}
	if err := p.SetTargets(targets); err != nil {
		return nil, err
	}
	return p, nil
}

// SetTargets replaces the targets, as after a reload of the targets file;
// it takes effect at the next cycle. Only the targets of Options.Shard are
// polled. A device whose name stays keeps its status, backoff, uptime and
// v3 engine state (unless its address, version or profile changed: then
// it starts afresh).
func (p *Poller) SetTargets(targets []*fleet.Target) error {
	inFile := len(targets)
	targets = p.opts.Shard.Select(targets)
	devs := make([]*device, 0, len(targets))
	byName := make(map[string]*device, len(targets))
	p.mu.RLock()
	old := p.byName
	p.mu.RUnlock()
	for _, t := range targets {
		if t == nil || t.Profile == nil || len(t.Profile.DS) == 0 && len(t.Profile.Tables) == 0 {
			return errors.New("set poller targets: a target without a profile")
		}
		if _, dup := byName[t.Name]; dup {
			return fmt.Errorf("set poller targets: target %s given twice", t.Name)
		}
		d := old[t.Name]
		if d == nil || !sameDevice(d.t, t) {
			d = newDevice(t, &p.opts)
		} else {
			d.t = t
			d.rediscover.Store(len(t.Profile.Tables) > 0)
		}
		devs = append(devs, d)
		byName[t.Name] = d
	}
	p.mu.Lock()
	p.devices, p.byName, p.inFile = devs, byName, inFile
	p.mu.Unlock()
	p.wakeDiscovery()
	return nil
}

// ShardStatus is the instance's part of the fleet.
type ShardStatus struct {
	Shard   string `json:"shard"`   // "K/N"; empty: every target
	Polled  int    `json:"polled"`  // targets of this shard
	Targets int    `json:"targets"` // targets in the file, all shards'
}

// ShardStatus returns the shard and how many of the file's targets it
// polls.
func (p *Poller) ShardStatus() ShardStatus {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return ShardStatus{Shard: p.opts.Shard.String(), Polled: len(p.devices), Targets: p.inFile}
}

func sameDevice(a, b *fleet.Target) bool {
	return a.Host == b.Host && a.Port == b.Port && a.Version == b.Version && a.Profile == b.Profile
}

func newDevice(t *fleet.Target, o *Options) *device {
	d := &device{t: t}
	d.plan.Store(newPlan(t, nil, nil, o))
	return d
}

// Run polls in cycles, one every Interval starting now, until ctx is done,
// with the background discoveries beside them (discoveryschedule.go). It returns
// ctx's error once its goroutines have ended. It must not overlap with
// Cycle.
func (p *Poller) Run(ctx context.Context) error {
	c := &carrier{ctx: ctx, slots: make(chan struct{}, p.opts.Concurrency)}
	p.carry.Store(c)
	defer func() { p.carry.Store(nil); c.wg.Wait() }() // after every Cycle: no Add races the Wait
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p.discoveryLoop(ctx, p.wake)
	}()
	defer wg.Wait()
	next := time.Now()
	for {
		p.wakeDiscovery()
		st := p.Cycle(ctx)
		p.wakeDiscovery()
		if p.opts.OnCycle != nil {
			p.opts.OnCycle(st)
		}
		next = next.Add(p.opts.Interval)
		if wait := time.Until(next); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		} else {
			next = time.Now()
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// Cycle polls every device that is not in backoff once, with at most
// Concurrency polls in flight, and returns when all are done or the cycle
// deadline (Options.CycleTimeout) has passed. Devices that failed most
// recently go first: their timeouts are the longest polls. It ends with
// one SpoolAppender.Sync. Cycles must not overlap.
func (p *Poller) Cycle(ctx context.Context) CycleStats {
	if p.running.Swap(true) {
		panic("poller: overlapping cycles")
	}
	defer p.running.Store(false)
	start := time.Now()
	p.mu.RLock()
	devs := p.devices
	p.seq++
	seq := p.seq
	p.mu.RUnlock()

	var c cycleCounters
	order := p.schedule(devs, &c)
	cctx, cancel := context.WithDeadlineCause(ctx, start.Add(p.opts.cycleTimeout()), errCycleDeadline)
	defer cancel()
	peak, limit := p.pollEach(order, func(d *device) { p.pollDevice(cctx, d, &c) })
	if err := p.sp.Sync(); err != nil {
		p.log.Error("sync spool after poll cycle", "err", err)
	}
	st := c.stats(seq, start, len(devs))
	st.InFlightMax, st.InFlightLimit = peak, limit
	p.mu.Lock()
	p.last = st
	p.mu.Unlock()
	attrs := []any{"seq", st.Seq, "devices", st.Devices, "ok", st.OK, "failed", st.Failed,
		"skipped", st.Skipped, "overrun", st.Overrun, "unknown", st.Unknown, "seconds", st.Duration.Seconds()}
	if st.Stopped > 0 {
		attrs = append(attrs, "stopped", st.Stopped)
	}
	for _, n := range []struct {
		name string
		n    int
	}{{"timeouts", st.Timeouts}, {"malformed", st.Malformed}, {"agent_errors", st.AgentErrors}, {"other_errors", st.OtherErrors}, {"wrong_types", st.WrongTypes}} {
		if n.n > 0 {
			attrs = append(attrs, n.name, n.n)
		}
	}
	p.log.Info("poll cycle", attrs...)
	p.logProblems(st)
	return st
}

// cycleProblems say which kinds of failure a cycle had.
type cycleProblems struct{ timeouts, malformed, agentErrors, otherErrors, wrongTypes bool }

// logProblems warns of st's problems when their kinds differ from those
// last logged, and says when they are over: a device that stays down is
// one line, not one a cycle (each cycle's "poll cycle" line counts them).
// A cycle without failures but with devices sitting out their backoff, or
// not polled to the end before the cycle's deadline (overrun), ends
// nothing: nothing says they answer again.
func (p *Poller) logProblems(st CycleStats) {
	now := cycleProblems{st.Timeouts > 0, st.Malformed > 0, st.AgentErrors > 0, st.OtherErrors > 0, st.WrongTypes > 0}
	if now == (cycleProblems{}) && st.Skipped+st.Overrun > 0 || now == p.problems {
		return
	}
	p.problems = now
	if now == (cycleProblems{}) {
		p.log.Info("poll cycle problems over", "seq", st.Seq)
		return
	}
	p.log.Warn("poll cycle problems", "seq", st.Seq, "timeouts", st.Timeouts, "malformed", st.Malformed, "agent_errors", st.AgentErrors,
		"other_errors", st.OtherErrors, "wrong_types", st.WrongTypes)
}

// eachDevice calls fn on each device in devs, in workers goroutines, and
// returns when all calls have returned.
func eachDevice(devs []*device, workers int, fn func(*device)) {
	jobs := make(chan *device)
	var wg sync.WaitGroup
	for range min(workers, len(devs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range jobs {
				fn(d)
			}
		}()
	}
	for _, d := range devs {
		jobs <- d
	}
	close(jobs)
	wg.Wait()
}

// schedule returns the devices to poll this cycle, failing ones first, and
// counts the ones sitting out their backoff.
func (p *Poller) schedule(devs []*device, c *cycleCounters) []*device {
	order := make([]*device, 0, len(devs))
	for _, d := range devs {
		d.mu.Lock()
		skip := d.st.SkipCycles > 0
		if skip {
			d.st.SkipCycles--
		}
		d.mu.Unlock()
		if skip {
			c.skipped.Add(1)
			continue
		}
		order = append(order, d)
	}
	sort.SliceStable(order, func(i, j int) bool {
		return order[i].failures() > order[j].failures()
	})
	return order
}

func (d *device) failures() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.st.ConsecutiveFailures
}

type cycleCounters struct {
	ok, failed, skipped, overrun, stopped      atomic.Int64
	values, unknown, discont, writeErr, defer_ atomic.Int64
	timeouts, agentErrs, otherErrs, wrongTypes atomic.Int64
	malformed, requests, rows, staleRows       atomic.Int64
}

// malformed reports whether gosnmp failed on an answer it could not parse.
func malformed(err error) bool {
	s := err.Error()
	return strings.Contains(s, "packet sanity") || strings.Contains(s, "unmarshal") || strings.Contains(s, "decod")
}

// countFailure counts a failed poll by its kind.
func (c *cycleCounters) countFailure(err error) {
	switch {
	case errors.Is(err, errAgent):
		c.agentErrs.Add(1)
	case errors.Is(err, gosnmp.ErrMaxRetriesExceeded), strings.Contains(err.Error(), "timeout"):
		c.timeouts.Add(1)
	case malformed(err):
		c.malformed.Add(1)
	default:
		c.otherErrs.Add(1)
	}
}

func (c *cycleCounters) stats(seq uint64, start time.Time, n int) CycleStats {
	return CycleStats{
		Seq: seq, Start: start, Duration: time.Since(start), Devices: n,
		OK: int(c.ok.Load()), Failed: int(c.failed.Load()), Skipped: int(c.skipped.Load()),
		Overrun: int(c.overrun.Load()), Stopped: int(c.stopped.Load()), Values: int(c.values.Load()), Unknown: int(c.unknown.Load()),
		Discontinuities: int(c.discont.Load()), WriteErrors: int(c.writeErr.Load()),
		IndexDeferred: int(c.defer_.Load()), Timeouts: int(c.timeouts.Load()), AgentErrors: int(c.agentErrs.Load()),
		OtherErrors: int(c.otherErrs.Load()), WrongTypes: int(c.wrongTypes.Load()), Malformed: int(c.malformed.Load()),
		Requests: int(c.requests.Load()), Rows: int(c.rows.Load()), StaleRows: int(c.staleRows.Load()),
	}
}

// pollDevice polls d, writes its entries and updates its status.
func (p *Poller) pollDevice(ctx context.Context, d *device, c *cycleCounters) {
	if ctx.Err() != nil {
		c.cut(ctx)
		return
	}
	probe := d.failures() >= p.opts.BackoffAfter
	pl := d.plan.Load()
	if len(d.t.Profile.Tables) > 0 && pl.disc == nil && !probe {
		// The first poll: discover first, or the rows are not polled.
		p.firstDiscovery(ctx, d)
		pl = d.plan.Load()
	}
	res, err := p.poll(ctx, d, pl, probe)
	err = p.explain(d, err, probe)
	now := p.now()
	if err != nil {
		if cutShort(ctx, err) {
			if c.cut(ctx) {
				d.recordError(now, fmt.Errorf("cycle deadline: %w", err), false, 0, 0)
			}
			return
		}
		c.failed.Add(1)
		c.countFailure(err)
		maxSkip := int(p.opts.BackoffMax / p.opts.Interval)
		if d.recordError(now, err, true, p.opts.BackoffAfter, max(maxSkip, 1)) == 0 {
			p.log.Warn("device down", "target", d.t.Name, "err", err)
		}
		return
	}
	c.requests.Add(int64(res.requests))
	flags := uint8(0)
	if res.hasUptime {
		if d.restarted(res.uptime, now, p.opts.Interval) {
			flags |= spool.FlagDiscontinuity
			c.discont.Add(1)
			pl, res, now = p.afterRestart(ctx, d, pl, res, now, c)
		}
		d.lastUptime, d.lastAt, d.hasUptime = res.uptime, now, true
	}
	if res.lostRow {
		d.rediscover.Store(true) // in the background: the other rows are fine
	}
	c.ok.Add(1)
	if n := d.failures(); n > 0 {
		p.log.Info("device back", "target", d.t.Name, "failed_polls", n)
	}
	werr := p.writeEntries(d, pl, &res, now, flags, c)
	d.keepStates(pl, res.values)
	d.mu.Lock()
	s := &d.st
	s.LastPoll, s.LastSuccess, s.RTT, s.Unknown = now, now, res.rtt, res.unknown
	s.LastError, s.ConsecutiveFailures, s.SkipCycles = "", 0, 0
	if werr != nil {
		s.LastError, s.LastErrorTime = werr.Error(), now
	}
	s.Polls++
	if flags&spool.FlagDiscontinuity != 0 {
		s.Restarts++
	}
	d.mu.Unlock()
	p.release(&res)
}

// afterRestart handles a poll that found the agent restarted: if the
// plan's discovery is from before the restart (which may have renumbered
// the rows), it discovers again now and polls the rows again with the new
// plan. If that fails, the rows of this poll are not written (their
// indexes may name other rows now; counted as StaleRows) and the device
// is rediscovered in the background. It returns the time of the poll
// whose values it returns: now, or when the second poll was answered.
func (p *Poller) afterRestart(ctx context.Context, d *device, pl *pollPlan, res pollResult, now time.Time, c *cycleCounters) (*pollPlan, pollResult, time.Time) {
	if pl.disc == nil {
		return pl, res, now
	}
	booted := now.Add(-time.Duration(res.uptime) * 10 * time.Millisecond)
	if !pl.disc.At.Before(booted) {
		return pl, res, now
	}
	// A discovery already in flight (in the background) may have started
	// before the restart: only a plan discovered since the boot will do.
	if p.discoverDevice(ctx, d) == nil && !d.plan.Load().disc.At.Before(booted) {
		npl := d.plan.Load()
		if again, err := p.poll(ctx, d, npl, false); err == nil {
			c.requests.Add(int64(again.requests))
			again.uptime, again.hasUptime = res.uptime, true
			p.release(&res)
			return npl, again, p.now()
		}
	}
	d.rediscover.Store(true)
	c.staleRows.Add(int64(pl.rowCount()))
	scalars := newPlan(d.t, nil, nil, &p.opts)
	res.values = res.values[:len(scalars.scalars)]
	return scalars, res, now
}

// writeEntries writes the entries of one answered poll: the scalars' (if
// the profile has scalars) and one per polled row. It returns the last
// write error.
func (p *Poller) writeEntries(d *device, pl *pollPlan, res *pollResult, now time.Time, flags uint8, c *cycleCounters) error {
	c.values.Add(int64(len(res.values)))
	c.unknown.Add(int64(res.unknown))
	c.wrongTypes.Add(int64(res.wrongTypes))
	var werr error
	var e spool.Entry // one for the device's entries: the appends keep none
	write := func(key string, values []spool.Value, flags uint8) {
		e = spool.Entry{Key: key, Time: now.Unix(), Milli: uint16(now.Nanosecond() / 1e6), Flags: flags, Values: values}
		indexErr, err := p.in.Append(&e)
		switch {
		case err != nil:
			werr = err
			c.writeErr.Add(1)
			p.log.Error("write poll result", "target", d.t.Name, "key", key, "err", err)
		case indexErr != nil:
			c.defer_.Add(1)
			p.log.Debug("index poll result later", "key", key, "err", indexErr)
		}
	}
	entries := 0 // the batch's appends: the scalars' entry and a row's each
	if len(pl.scalars) > 0 {
		entries++
	}
	for _, t := range pl.tables {
		entries += len(t.rows)
	}
	appendAll := func() error {
		if len(pl.scalars) > 0 {
			write(d.t.Name, res.values[:len(pl.scalars)], flags)
		}
		first := !pl.used.Swap(true)
		for _, t := range pl.tables {
			n := len(t.table.Columns)
			for i := range t.rows {
				key := t.rows[i].Key
				f := flags
				if first && pl.flagged[key] {
					f |= spool.FlagDiscontinuity
				}
				at := t.rowAt(i)
				write(key, res.values[at:at+n], f)
				c.rows.Add(1)
			}
		}
		return werr
	}
	if b, ok := p.sp.(BatchAppender); ok {
		return b.AppendBatch(entries, appendAll)
	}
	return appendAll()
}

func (d *device) recordError(now time.Time, err error, failure bool, after, maxSkip int) (before int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := &d.st
	before = s.ConsecutiveFailures
	s.LastPoll, s.LastError, s.LastErrorTime = now, err.Error(), now
	s.Polls++
	if failure {
		s.Failures++
		s.ConsecutiveFailures++
		s.SkipCycles = backoffSkips(s.ConsecutiveFailures, after, maxSkip)
	}
	return before
}

// errCycleDeadline is the cause of a cycle's context when its deadline
// (Options.CycleTimeout) passed.
var errCycleDeadline = errors.New("poll cycle deadline")

// cut counts a device a done ctx cut short: an overrun when the cycle's
// deadline passed (and it reports true), stopped when the poller was.
func (c *cycleCounters) cut(ctx context.Context) (overrun bool) {
	if ctx.Err() == nil || errors.Is(context.Cause(ctx), errCycleDeadline) {
		c.overrun.Add(1)
		return true
	}
	c.stopped.Add(1)
	return false
}

// restarted reports whether the agent restarted since the last answered
// poll: sysUpTime went back (and not by a TimeTicks wrap, due every 497
// days), or it is shorter than the time since that poll (with no earlier
// poll: than the interval), so the last sample the RRD holds is from before
// the restart.
func (d *device) restarted(up uint32, now time.Time, interval time.Duration) bool {
	const tick = 10 * time.Millisecond
	upDur := time.Duration(up) * tick
	if !d.hasUptime {
		return upDur < interval
	}
	elapsed := now.Sub(d.lastAt)
	expect := uint64(d.lastUptime) + uint64(max(elapsed, 0)/tick)
	if expect >= 1<<32 {
		got, want := uint64(up), expect-1<<32
		diff := max(got, want) - min(got, want)
		if diff <= uint64(elapsed/tick)/2+100 {
			return false // wrapped as due
		}
	}
	return up < d.lastUptime || upDur+time.Second < elapsed
}

// cutShort reports whether a poll failed because the cycle deadline came (a
// read timing out at the deadline may beat the context's own timer).
func cutShort(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}
