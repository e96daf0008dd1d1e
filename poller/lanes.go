package poller

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/gosnmp/gosnmp"
)

// Lanes: a poll of a slow device's large tables, spread over sockets side
// by side so that it fits the cycle. A device that answers each request
// 100 ms late and has 3,000 interfaces needs about 120 GetBulks for one
// poll of its rows (12 s), as many as its discovery: one after another,
// at a 10 s interval, every poll would be cut at the cycle's deadline and
// the rows never polled. A poll is made of units (a Get of at most
// MaxVarbinds OIDs, the walk of a run of a bulk table's rows); when its
// requests, at the device's measured time per request, would take more
// than a third of the cycle's deadline (the rest leaves room for the
// devices polled before it), its units are spread over as many lanes as
// make them fit, at most maxLanes, each lane a socket of its own sending
// one request at a time. A device slow because it is far away, or because
// it answers each request after a fixed delay, is then polled in time;
// one that serves its requests one after another is not helped, and a
// lane's request waits at most maxLanes of its answers.

// maxLanes is the most sockets one poll uses at once.
const maxLanes = 8

// pollUnit is one part of a poll: it sends its requests with g and stores
// what comes back in res, whose values and missing are the poll's.
type pollUnit func(g *gosnmp.GoSNMP, res *pollResult) error

// pollUnits returns the units of a poll of d with plan pl, a bulk table
// walked in up to lanes runs of its rows: its Gets of at most MaxVarbinds
// OIDs, then its bulk tables' walks. In one lane they run in that order,
// as a poll always did.
func (p *Poller) pollUnits(d *device, pl *pollPlan, lanes int) []pollUnit {
	var units []pollUnit
	// A plan whose only Get is sysUpTime.0 asks for it in its first bulk
	// walk (as a non-repeater): one request fewer.
	uptimeInBulk := pl.nGets == 1 && d.t.Version != gosnmp.Version1 && slices.ContainsFunc(pl.tables, func(t tablePlan) bool { return t.bulk })
	if !uptimeInBulk {
		gl := pl.gets()
		for lo := 0; lo < len(gl.oids); lo += p.opts.MaxVarbinds {
			lo, hi := lo, min(lo+p.opts.MaxVarbinds, len(gl.oids))
			units = append(units, func(g *gosnmp.GoSNMP, res *pollResult) error { return p.get(g, d, &gl, lo, hi, res) })
		}
	}
	for i := range pl.tables {
		if !pl.tables[i].bulk {
			continue
		}
		for _, run := range pl.tables[i].runs(lanes, p.opts.MaxRepetitions) {
			uptime := uptimeInBulk
			uptimeInBulk = false
			units = append(units, func(g *gosnmp.GoSNMP, res *pollResult) error { return p.bulkTable(g, run, pl, res, uptime) })
		}
	}
	return units
}

// runs splits tp's rows into at most n runs of consecutive rows, each of
// at least maxReps rows (one GetBulk's worth), each walked on its own
// from the row before it.
func (tp *tablePlan) runs(n, maxReps int) []*tablePlan {
	n = min(n, len(tp.rows)/maxReps)
	if n <= 1 {
		return []*tablePlan{tp}
	}
	out := make([]*tablePlan, 0, n)
	for k := range n {
		lo, hi := k*len(tp.rows)/n, (k+1)*len(tp.rows)/n
		run := *tp
		run.rows, run.at, run.last = tp.rows[lo:hi], tp.rowAt(lo), tp.rows[hi-1].Index
		if lo > 0 {
			run.after = tp.rows[lo-1].Index
		}
		out = append(out, &run)
	}
	return out
}

// lanes returns how many lanes a poll of d with plan pl takes: enough for
// its requests, at d's measured time per request, to take at most a
// third of the cycle's deadline; one for a probe of a failing device, and before
// anything was measured.
func (p *Poller) lanes(d *device, pl *pollPlan, probe bool) int {
	per := time.Duration(d.perRequest.Load())
	if probe || per <= 0 {
		return 1
	}
	requests := (pl.nGets + p.opts.MaxVarbinds - 1) / p.opts.MaxVarbinds
	for _, tp := range pl.tables {
		if tp.bulk {
			requests += len(tp.rows)/p.opts.MaxRepetitions + 1
		}
	}
	budget := p.opts.cycleTimeout() / 3
	need := per * time.Duration(requests)
	return min(int((need+budget-1)/budget), maxLanes)
}

// measured keeps d's time per request from a poll or discovery that sent
// requests over lanes sockets in elapsed.
func (d *device) measured(elapsed time.Duration, requests, lanes int) {
	if requests > 0 {
		d.perRequest.Store(int64(elapsed) * int64(lanes) / int64(requests))
	}
}

// runLanes runs units in lanes (one: in the caller's goroutine, in
// order), each lane with its own gosnmp struct and socket taking the next
// unit when it is done with one, and gathers the lanes' counts into res.
// The first error ends the other lanes and is returned.
func (p *Poller) runLanes(ctx context.Context, d *device, probe bool, units []pollUnit, lanes int, res *pollResult) error {
	jobs := make(chan pollUnit, len(units))
	for _, u := range units {
		jobs <- u
	}
	close(jobs)
	lanes = max(min(lanes, len(units)), 1)
	if lanes == 1 {
		return p.runLane(ctx, d, probe, jobs, res)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	each := make([]pollResult, lanes)
	var first sync.Once
	var firstErr error
	var wg sync.WaitGroup
	for i := range each {
		each[i] = pollResult{values: res.values, missing: res.missing}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.runLane(ctx, d, probe, jobs, &each[i]); err != nil {
				first.Do(func() { firstErr = err; cancel() })
			}
		}()
	}
	wg.Wait()
	for i := range each {
		res.requests += each[i].requests
		res.wrongTypes += each[i].wrongTypes
		if each[i].hasUptime {
			res.uptime, res.hasUptime = each[i].uptime, true
		}
	}
	return firstErr
}

// runLane runs the units it takes from jobs, one after another, on one
// socket of its own, until jobs is empty or a unit fails.
func (p *Poller) runLane(ctx context.Context, d *device, probe bool, jobs <-chan pollUnit, res *pollResult) error {
	g, err := p.connect(ctx, d, probe)
	if err != nil {
		return err
	}
	defer p.disconnect(g)
	for u := range jobs {
		if err = u(g, res); err != nil {
			break
		}
	}
	if d.t.V3 != nil {
		d.keepUSM(g, time.Now())
	}
	return err
}
