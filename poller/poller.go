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
	"github.com/spoold/spoold/spool"
)

// Poller polls a set of targets in cycles and writes one spool entry per
// answered poll.
type Poller struct {
	opts Options
	w    Writer
	sink Sink
	log  *slog.Logger
	now  func() time.Time

	running atomic.Bool // a cycle is in progress
	mu      sync.RWMutex
	devices []*device
	byName  map[string]*device
	last    CycleStats
	seq     uint64
}

// device is a target and what the poller keeps about it between cycles.
// Its poll state (usm, uptime) is touched only by the one worker polling it;
// st is guarded by mu for readers of Status.
type device struct {
	t        *Target
	oids     []string // the profile's OIDs, then sysUpTime.0 if not among them
	uptimeAt int      // index of sysUpTime.0 in oids

	usm   *gosnmp.UsmSecurityParameters // v3 engine state from the last poll
	usmAt time.Time

	lastUptime uint32
	lastAt     time.Time // time of the last answered poll with an uptime
	hasUptime  bool

	mu sync.Mutex
	st DeviceStatus
}

// New returns a poller of targets that writes entries with w and adds them
// to sink (nil: no index). logger nil discards logs. It starts nothing.
func New(opts Options, targets []*Target, w Writer, sink Sink, logger *slog.Logger) (*Poller, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if w == nil {
		return nil, errors.New("create poller: no writer")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := &Poller{opts: opts, w: w, sink: sink, log: logger, now: opts.Now}
	if p.now == nil {
		p.now = time.Now
	}
	if err := p.SetTargets(targets); err != nil {
		return nil, err
	}
	return p, nil
}

// SetTargets replaces the targets, as after a reload of the targets file;
// it takes effect at the next cycle. A device whose name stays keeps its
// status, backoff, uptime and v3 engine state (unless its address, version
// or profile changed: then it starts afresh).
func (p *Poller) SetTargets(targets []*Target) error {
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
			d = newDevice(t)
		} else {
			d.t = t
		}
		devs = append(devs, d)
		byName[t.Name] = d
	}
	p.mu.Lock()
	p.devices, p.byName = devs, byName
	p.mu.Unlock()
	return nil
}

func sameDevice(a, b *Target) bool {
	return a.Host == b.Host && a.Port == b.Port && a.Version == b.Version && a.Profile == b.Profile
}

func newDevice(t *Target) *device {
	d := &device{t: t, oids: t.Profile.OIDs(), uptimeAt: -1}
	for i, o := range d.oids {
		if o == OIDSysUpTime {
			d.uptimeAt = i
		}
	}
	if d.uptimeAt < 0 {
		d.uptimeAt = len(d.oids)
		d.oids = append(d.oids, OIDSysUpTime)
	}
	return d
}

// Run polls in cycles, one every Interval starting now, until ctx is done.
// It returns ctx's error. It must not overlap with Cycle.
func (p *Poller) Run(ctx context.Context) error {
	next := time.Now()
	for {
		st := p.Cycle(ctx)
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
// one Writer.Sync. Cycles must not overlap.
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
	cctx, cancel := context.WithDeadline(ctx, start.Add(p.opts.cycleTimeout()))
	defer cancel()
	jobs := make(chan *device)
	var wg sync.WaitGroup
	for range min(p.opts.Concurrency, len(order)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range jobs {
				p.pollDevice(cctx, d, &c)
			}
		}()
	}
	for _, d := range order {
		jobs <- d
	}
	close(jobs)
	wg.Wait()
	if err := p.w.Sync(); err != nil {
		p.log.Error("sync spool after poll cycle", "err", err)
	}
	st := c.stats(seq, start, len(devs))
	p.mu.Lock()
	p.last = st
	p.mu.Unlock()
	p.log.Info("poll cycle", "seq", st.Seq, "devices", st.Devices, "ok", st.OK, "failed", st.Failed,
		"skipped", st.Skipped, "overrun", st.Overrun, "unknown", st.Unknown, "seconds", st.Duration.Seconds())
	if st.Failed > 0 || st.WrongTypes > 0 {
		p.log.Warn("poll cycle problems", "seq", st.Seq, "timeouts", st.Timeouts, "malformed", st.Malformed, "agent_errors", st.AgentErrors,
			"other_errors", st.OtherErrors, "wrong_types", st.WrongTypes)
	}
	return st
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
	ok, failed, skipped, overrun               atomic.Int64
	values, unknown, discont, writeErr, defer_ atomic.Int64
	timeouts, agentErrs, otherErrs, wrongTypes atomic.Int64
	malformed                                  atomic.Int64
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
	case strings.Contains(err.Error(), "timeout"): // gosnmp: "request timeout (after N retries)"
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
		Overrun: int(c.overrun.Load()), Values: int(c.values.Load()), Unknown: int(c.unknown.Load()),
		Discontinuities: int(c.discont.Load()), WriteErrors: int(c.writeErr.Load()),
		IndexDeferred: int(c.defer_.Load()), Timeouts: int(c.timeouts.Load()), AgentErrors: int(c.agentErrs.Load()),
		OtherErrors: int(c.otherErrs.Load()), WrongTypes: int(c.wrongTypes.Load()), Malformed: int(c.malformed.Load()),
	}
}

// pollDevice polls d, writes its entry and updates its status.
func (p *Poller) pollDevice(ctx context.Context, d *device, c *cycleCounters) {
	if ctx.Err() != nil {
		c.overrun.Add(1)
		return
	}
	probe := d.failures() >= p.opts.BackoffAfter
	res, err := p.poll(ctx, d, probe)
	now := p.now()
	if err != nil {
		if cutShort(ctx, err) {
			c.overrun.Add(1)
			d.recordError(now, fmt.Errorf("cycle deadline: %w", err), false, 0, 0)
			return
		}
		c.failed.Add(1)
		c.countFailure(err)
		maxSkip := int(p.opts.BackoffMax / p.opts.Interval)
		d.recordError(now, err, true, p.opts.BackoffAfter, max(maxSkip, 1))
		return
	}
	flags := uint8(0)
	if res.hasUptime {
		if d.restarted(res.uptime, now, p.opts.Interval) {
			flags |= spool.FlagDiscontinuity
			c.discont.Add(1)
		}
		d.lastUptime, d.lastAt, d.hasUptime = res.uptime, now, true
	}
	c.ok.Add(1)
	c.values.Add(int64(len(res.values)))
	c.unknown.Add(int64(res.unknown))
	c.wrongTypes.Add(int64(res.wrongTypes))
	e := spool.Entry{Key: d.t.Name, Time: now.Unix(), Milli: uint16(now.Nanosecond() / 1e6), Flags: flags, Values: res.values}
	ref, created, werr := p.w.Append(&e)
	if werr != nil {
		c.writeErr.Add(1)
		p.log.Error("write poll result", "target", d.t.Name, "err", werr)
	} else if created && p.sink != nil {
		if _, aerr := p.sink.Add(ref.Hash, d.t.Name, ref.Time); aerr != nil {
			c.defer_.Add(1)
			p.log.Debug("index poll result later", "target", d.t.Name, "err", aerr)
		}
	}
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
}

func (d *device) recordError(now time.Time, err error, failure bool, after, maxSkip int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := &d.st
	s.LastPoll, s.LastError, s.LastErrorTime = now, err.Error(), now
	s.Polls++
	if failure {
		s.Failures++
		s.ConsecutiveFailures++
		s.SkipCycles = backoffSkips(s.ConsecutiveFailures, after, maxSkip)
	}
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
