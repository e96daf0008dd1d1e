package poller

import (
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/procfs"
)

// The polls of a cycle in flight: at most Concurrency, and fewer while
// the CPUs have no time for more. A poll spends its time waiting for its
// agent's answers, a wait that as many polls side by side as there are
// sockets (--poll-concurrency) share, or on a CPU, decoding the answers
// and appending the rows to the spool, which two CPUs give two polls at
// a time however many are in flight. Each poll in flight holds a gosnmp
// client (its 64 KiB receive buffer), the values it gathered and, while
// it appends, a thread in a system call: 1,000 simulated devices that
// answer at once (bench/scale-ab.sh, the simulator on the same two CPUs)
// took 22% less RSS and 3–7% less CPU at 32 polls in flight than at 256,
// each cycle no longer. Far or slow agents need the many: 1,000 devices
// that each answer 200 ms late take about 0.6 s a poll, 35 polls side by
// side for a 30 s cycle, 256 for a 2 s one.
//
// So a cycle's gate starts polls up to a limit that it moves every
// gateTick by the share of the machine's CPU time idle since the last
// (/proc/stat): while the polls take every place of the limit and more
// than gateIdle of it was idle, the limit grows by a quarter, up to
// Concurrency; while less than gateBusy was idle it shrinks by a quarter,
// not below gateFloor. Whatever the CPUs, it grows while the polls at the
// rate they are done would not all be done in a third of the cycle's
// deadline: the gate never makes a cycle overrun that Concurrency polls
// in flight would not. A poll counts against the limit for twice the
// median time of the cycle's polls done so far (the last cycle's at its
// start), gateStall at least, its device's response timeout at most: one
// that takes longer than most waits for a far, slow or dead agent, not
// for a CPU all polls queue for alike; and a poll of a device whose last
// poll failed does not count at all (it waits out its timeouts): slow
// and dead agents take sockets only. Each cycle starts at the limit the last ended with.
const (
	gateTick  = 200 * time.Millisecond
	gateIdle  = 0.10 // grow while more of the CPUs' time is idle
	gateBusy  = 0.05 // shrink while less is
	gateStall = 100 * time.Millisecond
)

// durBuckets are the buckets of the polls' times: k holds those under
// durUnit << k (and over half that), the last everything longer.
const (
	durBuckets = 24
	durUnit    = 250 * time.Microsecond
)

// gateFloor is the least limit the gate moves to: 8 polls a CPU, at most
// Concurrency.
func gateFloor(concurrency int) int { return min(concurrency, max(16, 8*runtime.NumCPU())) }

// gate admits a cycle's polls (see above). Its methods are safe for
// concurrent use.
type gate struct {
	mu       sync.Mutex
	cond     sync.Cond
	max      int // Concurrency
	floor    int
	limit    int // polls counted against the limit at most
	counted  int // polls in flight counted against the limit
	inFlight int // polls in flight
	peak     int // most polls in flight at once
	waiting  bool
	// Progress: polls to run, polls done, since when, and the time by
	// which they should be done (behind).
	total, done int
	start       time.Time
	budget      time.Duration
	durs        [durBuckets]int // the polls done by their time
	lastStall   time.Duration   // the last cycle's stall, for its start
}

func newGate(concurrency, limit, total int, budget, stall time.Duration) *gate {
	g := &gate{max: concurrency, floor: gateFloor(concurrency), total: total, start: time.Now(), budget: budget, lastStall: stall}
	g.limit = min(max(limit, g.floor), concurrency)
	g.cond.L = &g.mu
	return g
}

// enter waits for a place for a poll and returns the function that lets
// the poll stop counting against the limit (idempotent; the poll's end
// calls it too). counted false: a poll that counts against Concurrency
// only.
func (g *gate) enter(counted bool) (uncount func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.inFlight >= g.max || counted && g.counted >= g.limit {
		g.waiting = true
		g.cond.Wait()
	}
	g.waiting = false
	g.inFlight++
	g.peak = max(g.peak, g.inFlight)
	if !counted {
		return func() {}
	}
	g.counted++
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.counted--
			g.mu.Unlock()
			g.cond.Signal()
		})
	}
}

// leave ends a poll that entered, and took took.
func (g *gate) leave(took time.Duration) {
	g.mu.Lock()
	g.inFlight--
	g.done++
	k := 0
	for k < durBuckets-1 && took >= durUnit<<k {
		k++
	}
	g.durs[k]++
	g.mu.Unlock()
	g.cond.Signal()
}

// adjust moves the limit by the share of the CPUs' time idle since the
// last tick (known: it could be read).
func (g *gate) adjust(idle float64, known bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch wanted := g.waiting && g.counted >= g.limit; {
	case g.behind() || wanted && (!known || idle > gateIdle):
		g.limit = min(g.max, g.limit+max(g.limit/4, 1))
		g.cond.Broadcast()
	case known && idle < gateBusy:
		g.limit = max(g.floor, g.limit-g.limit/4)
	}
}

// stall is how long a poll starting now counts against the limit (above),
// its timeout aside.
func (g *gate) stall() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done == 0 {
		return max(gateStall, g.lastStall)
	}
	seen := 0
	for k, n := range g.durs {
		if seen += n; 2*seen >= g.done {
			return max(gateStall, 2*(durUnit<<k))
		}
	}
	return gateStall // not reached: the buckets hold every poll done
}

// behind reports whether the polls at the rate they are done would not
// all be done within the budget. g.mu is held.
func (g *gate) behind() bool {
	if g.done == 0 || !g.waiting {
		return false
	}
	elapsed := time.Since(g.start)
	left := time.Duration(float64(elapsed) * float64(g.total-g.done) / float64(g.done))
	return elapsed+left > g.budget
}

// cpuIdle reads the machine's CPU time (/proc/stat, through procfs): the
// share of it idle since the last read.
type cpuIdle struct {
	fs        procfs.FS
	ok        bool
	idle, all float64
}

func newCPUIdle() *cpuIdle {
	c := &cpuIdle{}
	fs, err := procfs.NewDefaultFS()
	if err == nil {
		c.fs, c.ok = fs, true
		c.read()
	}
	return c
}

// read returns the share of the CPUs' time idle (waiting for I/O
// included) since the last read, and whether it knows it.
func (c *cpuIdle) read() (float64, bool) {
	if !c.ok {
		return 0, false
	}
	st, err := c.fs.Stat()
	if err != nil {
		c.ok = false
		return 0, false
	}
	t := st.CPUTotal
	idle := t.Idle + t.Iowait
	all := idle + t.User + t.Nice + t.System + t.IRQ + t.SoftIRQ + t.Steal
	di, da := idle-c.idle, all-c.all
	c.idle, c.all = idle, all
	if da <= 0 {
		return 0, false
	}
	return di / da, true
}

// pollEach polls each device of order with fn through a gate (above), and
// returns when all polls have returned, with the most in flight at once
// and the limit it ended with.
func (p *Poller) pollEach(order []*device, fn func(*device)) (peak, limit int) {
	g := newGate(p.opts.Concurrency, int(p.gateLimit.Load()), len(order), p.opts.cycleTimeout()/3, time.Duration(p.gateStall.Load()))
	done := make(chan struct{})
	var ticks sync.WaitGroup
	ticks.Add(1)
	go func() {
		defer ticks.Done()
		idle := p.idleCPU
		if idle == nil {
			idle = newCPUIdle().read
		}
		t := time.NewTicker(gateTick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				g.adjust(idle())
			}
		}
	}()
	var wg sync.WaitGroup
	for _, d := range order {
		uncount := g.enter(d.failures() == 0)
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			t := time.AfterFunc(min(g.stall(), p.timeout(d.t)), uncount)
			defer func() { t.Stop(); uncount(); g.leave(time.Since(start)) }()
			fn(d)
		}()
	}
	wg.Wait()
	close(done)
	ticks.Wait()
	p.gateStall.Store(int64(g.stall()))
	g.mu.Lock()
	defer g.mu.Unlock()
	p.gateLimit.Store(int64(g.limit))
	return g.peak, g.limit
}
