package poller

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/internal/snmpvalue"
	"github.com/spoold/spoold/spool"
)

// pollResult is one answered poll of a device.
type pollResult struct {
	values     []spool.Value
	unknown    int
	wrongTypes int // varbinds whose type cannot be their value
	uptime     uint32
	hasUptime  bool
	rtt        time.Duration
	requests   int    // SNMP requests sent
	missing    []bool // per value: the agent said it has no such instance (or a walk passed it)
	lostRow    bool   // a polled row has none of its polled cells any more
	mem        *pollMemory
}

// pollMemory is the memory of a poll's values and missing flags: about
// 400 bytes an interface, garbage once the poll's entries are appended
// (the spool encodes them; nothing keeps them). The Poller keeps it for
// the next poll (Poller.results), so that a fleet's polls do not hand the
// collector their whole results again at every cycle.
type pollMemory struct {
	values  []spool.Value
	missing []bool
}

// newResult returns the result of a poll of n values, with memory a
// finished poll gave back if there is some.
func (p *Poller) newResult(n int) pollResult {
	m, _ := p.results.Get().(*pollMemory)
	if m == nil {
		m = new(pollMemory)
	}
	m.values = slices.Grow(m.values[:0], n)[:n]
	m.missing = slices.Grow(m.missing[:0], n)[:n]
	clear(m.missing)
	return pollResult{values: m.values, missing: m.missing, mem: m}
}

// release gives res's memory back for another poll: res is not used
// after, its values neither (they are appended).
func (p *Poller) release(res *pollResult) {
	if res.mem != nil {
		p.results.Put(res.mem)
		*res = pollResult{}
	}
}

// errAgent is wrapped by errors of an agent that answered with an error
// status for the whole request.
var errAgent = errors.New("agent error")

// setup gives g the settings of one poll of d (probe: of a failing
// device), every field a poll sets, so that a kept client (clients.go)
// carries nothing of its last target.
func (p *Poller) setup(g *gosnmp.GoSNMP, ctx context.Context, d *device, probe bool) {
	t := d.t
	g.Target, g.Port, g.Transport = t.Host, t.Port, "udp"
	g.Version, g.Community, g.Context = t.Version, t.Community.Reveal(), ctx
	g.Timeout, g.Retries, g.MaxOids = p.timeout(t), p.retries(t, probe), p.opts.MaxVarbinds
	g.SecurityModel, g.MsgFlags, g.SecurityParameters = 0, 0, nil
	g.ContextName, g.ContextEngineID = "", ""
	if t.V3 != nil {
		g.SecurityModel = gosnmp.UserSecurityModel
		g.MsgFlags = gosnmp.NoAuthNoPriv
		if t.V3.Auth != gosnmp.NoAuth {
			g.MsgFlags = gosnmp.AuthNoPriv
			if t.V3.Priv != gosnmp.NoPriv {
				g.MsgFlags = gosnmp.AuthPriv
			}
		}
		g.ContextName = t.V3.Context
		g.SecurityParameters = d.usmParams(time.Now())
	}
}

// retries are the resends after a timeout for t: its retries=, or
// Options.Retries; none for a probe of a failing device.
func (p *Poller) retries(t *fleet.Target, probe bool) int {
	switch {
	case probe:
		return 0
	case t.Retries >= 0:
		return t.Retries
	}
	return p.opts.Retries
}

// explain turns gosnmp's error of a poll or discovery of t into one that
// says what it may mean: a timeout with the retries configured (gosnmp
// counts them its own way), and the SNMPv3 reports by name.
func (p *Poller) explain(d *device, err error, probe bool) error {
	if err == nil {
		return nil
	}
	t := d.t
	why := ""
	switch {
	case errors.Is(err, gosnmp.ErrMaxRetriesExceeded):
		retries := fmt.Sprintf("%d retries", p.retries(t, probe))
		if probe {
			retries = "no retries (a probe of a failing device)"
		}
		return fmt.Errorf("request timeout: no answer in %s with %s: device down, or wrong community / ACL / port: %w",
			p.timeout(t), retries, gosnmp.ErrMaxRetriesExceeded)
	case t.V3 != nil && strings.Contains(err.Error(), "not authentic") && p.unknownUser(d, err.Error()):
		why = "SNMPv3 report unknownUserName: the agent has no user " + fmt.Sprintf("%q", t.V3.User)
	case t.V3 != nil && strings.Contains(err.Error(), "not authentic"):
		why = "SNMPv3 report wrongDigest: wrong auth passphrase or auth protocol"
	case errors.Is(err, gosnmp.ErrUnknownUsername):
		why = "SNMPv3 report unknownUserName: the agent has no user " + fmt.Sprintf("%q", t.V3.User)
	case errors.Is(err, gosnmp.ErrWrongDigest):
		why = "SNMPv3 report wrongDigest: wrong auth passphrase or auth protocol"
	case errors.Is(err, gosnmp.ErrNotInTimeWindow):
		why = "SNMPv3 report notInTimeWindow: the agent's boots or time moved (restart or clock)"
	case errors.Is(err, gosnmp.ErrUnknownEngineID):
		why = "SNMPv3 report unknownEngineID"
	case errors.Is(err, gosnmp.ErrUnknownSecurityLevel):
		why = "SNMPv3 report unsupportedSecLevel: the user has no such auth/priv level on the agent"
	case errors.Is(err, gosnmp.ErrDecryption):
		why = "SNMPv3 decryption failed: wrong privacy passphrase or privacy protocol"
	default:
		return err
	}
	if t.V3 == nil {
		return err
	}
	return fmt.Errorf("%s: %w", why, err)
}

// unknownUser asks t's agent, without authentication, for sysUpTime as t's
// user and reports whether the agent answers that it has no such user.
// gosnmp checks the agent's report to an authenticated request as if it
// were authenticated (it is not) and so cannot tell an unknown user from a
// wrong digest; the report to this request tells them apart.
// It asks once for each error text raw, with the engine state the polls
// learned (no engine discovery).
func (p *Poller) unknownUser(d *device, raw string) bool {
	d.usmMu.Lock()
	defer d.usmMu.Unlock()
	if d.v3Raw == raw {
		return d.v3Unknown
	}
	t := d.t
	sp := &gosnmp.UsmSecurityParameters{UserName: t.V3.User}
	if d.usm != nil {
		sp.AuthoritativeEngineID, sp.AuthoritativeEngineBoots = d.usm.AuthoritativeEngineID, d.usm.AuthoritativeEngineBoots
		sp.AuthoritativeEngineTime = d.usm.AuthoritativeEngineTime + uint32(max(time.Since(d.usmAt), 0)/time.Second)
	}
	g := &gosnmp.GoSNMP{
		Target: t.Host, Port: t.Port, Transport: "udp", Version: gosnmp.Version3,
		Timeout: p.timeout(t), SecurityModel: gosnmp.UserSecurityModel, MsgFlags: gosnmp.NoAuthNoPriv,
		SecurityParameters: sp,
	}
	if err := g.Connect(); err != nil {
		return false
	}
	defer g.Close()
	_, err := g.Get([]string{".1.3.6.1.2.1.1.3.0"})
	d.v3Raw, d.v3Unknown = raw, errors.Is(err, gosnmp.ErrUnknownUsername)
	return d.v3Unknown
}

// timeout is the wait for one response of t: its timeout=, or
// Options.Timeout.
func (p *Poller) timeout(t *fleet.Target) time.Duration {
	if t.Timeout > 0 {
		return t.Timeout
	}
	return p.opts.Timeout
}

// usmParams returns the USM parameters for the next poll: a copy of those
// the last poll learned (engine ID, boots, time and localized keys), with
// the engine time advanced by the time since, so a poll needs neither
// engine discovery nor a time-window resync; or fresh ones.
func (d *device) usmParams(now time.Time) *gosnmp.UsmSecurityParameters {
	d.usmMu.Lock()
	defer d.usmMu.Unlock()
	if d.usm != nil {
		sp := d.usm.Copy().(*gosnmp.UsmSecurityParameters)
		if dt := now.Sub(d.usmAt); dt > 0 {
			sp.AuthoritativeEngineTime += uint32(dt / time.Second)
		}
		return sp
	}
	v := d.t.V3
	return &gosnmp.UsmSecurityParameters{
		UserName:                 v.User,
		AuthenticationProtocol:   v.Auth,
		AuthenticationPassphrase: v.AuthPass.Reveal(),
		PrivacyProtocol:          v.Priv,
		PrivacyPassphrase:        v.PrivPass.Reveal(),
	}
}

// keepUSM stores the USM state g learned, for the next poll of d.
func (d *device) keepUSM(g *gosnmp.GoSNMP, now time.Time) {
	sp, ok := g.SecurityParameters.(*gosnmp.UsmSecurityParameters)
	if ok && sp.AuthoritativeEngineID != "" {
		d.usmMu.Lock()
		defer d.usmMu.Unlock()
		d.usm, d.usmAt = sp, now
	}
}

// poll polls one device with plan pl: its Get OIDs in Gets of at most
// MaxVarbinds, then its bulk tables' walks, spread over lanes when they
// would not fit the cycle otherwise (lanes.go).
func (p *Poller) poll(ctx context.Context, d *device, pl *pollPlan, probe bool) (pollResult, error) {
	res := p.newResult(pl.nValues)
	for i := range res.values {
		res.values[i] = spool.Value{Name: pl.ds(i).Name}
	}
	lanes := p.lanes(d, pl, probe)
	units := p.pollUnits(d, pl, lanes)
	lanes = min(lanes, len(units))
	start := time.Now()
	if err := p.runLanes(ctx, d, probe, units, lanes, &res); err != nil {
		p.release(&res)
		return pollResult{}, err
	}
	res.rtt = time.Since(start)
	d.measured(res.rtt, res.requests, lanes)
	res.lostRow = pl.lostRow(res.missing)
	for _, v := range res.values {
		if v.Type == spool.Unknown {
			res.unknown++
		}
	}
	return res, nil
}

// get requests gl.oids[lo:hi] and stores what comes back in res. An agent
// that says tooBig gets the halves; a v1 agent's noSuchName drops the
// named OID (left unknown) and asks again for the rest.
func (p *Poller) get(g *gosnmp.GoSNMP, d *device, gl *getList, lo, hi int, res *pollResult) error {
	idx := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		idx = append(idx, i)
	}
	return p.getIndexes(g, d, gl, idx, res)
}

func (p *Poller) getIndexes(g *gosnmp.GoSNMP, d *device, gl *getList, idx []int, res *pollResult) error {
	for len(idx) > 0 {
		oids := make([]string, len(idx))
		for i, k := range idx {
			oids[i] = gl.oids[k]
		}
		pkt, err := g.Get(oids)
		res.requests++
		if err != nil {
			return fmt.Errorf("get %d OIDs from %s: %w", len(oids), d.t.Address(), err)
		}
		switch {
		case pkt.Error == gosnmp.NoError:
			gl.store(idx, pkt.Variables, res)
			return nil
		case pkt.Error == gosnmp.TooBig && len(idx) > 1:
			h := len(idx) / 2
			if err := p.getIndexes(g, d, gl, idx[:h], res); err != nil {
				return err
			}
			idx = idx[h:]
		case pkt.Error == gosnmp.NoSuchName && pkt.ErrorIndex >= 1 && int(pkt.ErrorIndex) <= len(idx):
			k := int(pkt.ErrorIndex) - 1
			if at := gl.pos[idx[k]]; at >= 0 {
				res.missing[at] = true // a v1 agent's way of saying noSuchInstance
			}
			idx = append(idx[:k:k], idx[k+1:]...)
		default:
			return fmt.Errorf("get %d OIDs from %s: %w: %v at varbind %d", len(oids), d.t.Address(), errAgent, pkt.Error, pkt.ErrorIndex)
		}
	}
	return nil
}

// store maps the varbinds answering gl.oids[idx[i]] into res.
func (gl *getList) store(idx []int, vars []gosnmp.SnmpPDU, res *pollResult) {
	for i := range vars {
		pdu := &vars[i]
		k := -1
		if i < len(idx) && sameOID(pdu.Name, gl.oids[idx[i]]) {
			k = idx[i]
		} else {
			for _, j := range idx { // an agent that reordered the varbinds
				if sameOID(pdu.Name, gl.oids[j]) {
					k = j
					break
				}
			}
		}
		if k < 0 {
			continue
		}
		if k == gl.pl.uptimeAt {
			res.uptime, res.hasUptime = uptimeTicks(pdu)
		}
		if at := gl.pos[k]; at >= 0 {
			res.take(gl.pl, at, pdu)
		}
	}
}

// take stores the varbind of value at in res.
func (res *pollResult) take(pl *pollPlan, at int, pdu *gosnmp.SnmpPDU) {
	if v, ok := mapValue(pl.ds(at), pdu); ok {
		res.values[at] = v
		return
	}
	if !snmpvalue.None(pdu.Type) {
		res.wrongTypes++
	} else if pdu.Type != gosnmp.Null {
		res.missing[at] = true
	}
}

// bulkTable walks tp's columns up to its last row and stores the cells of
// its rows in res; a row missing from a column's walk lost its row.
// With uptime, the walk's first request asks for sysUpTime.0 too.
func (p *Poller) bulkTable(g *gosnmp.GoSNMP, tp *tablePlan, pl *pollPlan, res *pollResult, uptime bool) error {
	lim := walkLimits{maxReps: min(p.opts.MaxRepetitions, len(tp.rows)), maxRows: p.opts.MaxTableRows, rows: len(tp.rows), last: tp.last, after: tp.after}
	if uptime {
		lim.nonRep = []string{strings.TrimSuffix(OIDSysUpTime, ".0")}
	}
	// Each cell is stored as its answer comes: at[c] is the first of the
	// plan's rows column c's walk has not passed.
	found := make([]bool, len(tp.rows)*len(tp.table.Columns))
	at := make([]int, len(tp.cols))
	lim.each = func(c int, index string, pdu *gosnmp.SnmpPDU) {
		r := at[c]
		for r < len(tp.rows) && compareOID(tp.rows[r].Index, index) < 0 {
			r++
		}
		at[c] = r
		if r == len(tp.rows) || tp.rows[r].Index != index {
			return // a row the table has but this plan does not poll
		}
		for j, a := range tp.rows[r].Alternative() {
			if a >= 0 && tp.walked[j][a] == c {
				res.take(pl, tp.rowAt(r)+j, pdu)
				found[r*len(tp.table.Columns)+j] = true
			}
		}
	}
	_, extra, n, err := walkColumnsWith(g, tp.cols, lim)
	res.requests += n
	if err != nil {
		return fmt.Errorf("poll table %s: %w", tp.table.Name, err)
	}
	fixed := getList{pl: pl, oids: pl.oids, pos: pl.pos}
	fixed.store([]int{pl.uptimeAt}, extra, res)
	for r, row := range tp.rows {
		for j, a := range row.Alternative() {
			if a >= 0 && !found[r*len(tp.table.Columns)+j] {
				res.missing[tp.rowAt(r)+j] = true
			}
		}
	}
	return nil
}

func sameOID(got, want string) bool { return strings.TrimPrefix(got, ".") == want }
