package rrd

import (
	"bytes"
	"errors"
	"fmt"
	"math"
)

// The arithmetic of an update, as librrd 1.7 does it, on a live head in
// memory. An update at time t with values v moves the file from its last
// update to t: each data source's value becomes a rate (GAUGE as given,
// COUNTER and DERIVE the increase of an integer over the interval, ...),
// unknown if the interval is longer than the heartbeat or the rate is
// outside min/max; the seconds before each step boundary add to the open
// primary data point (PDP); each boundary passed closes a PDP, unknown if
// more than half its seconds were; each closed PDP feeds every archive's
// consolidated data point (CDP), and an archive whose row is complete
// gets one row (the primary value) and, when a gap spans several rows,
// the same PDP repeated (the secondary value). The products and quotients
// below are kept in librrd's order and rounded where C rounds them (an
// explicit float64() keeps Go from fusing a multiply and an add), since
// the goal is the same bits, not just the same numbers.

// dnan is librrd's unknown: the NaN an x86 0.0/0.0 gives (sign set),
// not Go's math.NaN(), whose bits differ.
var dnan = math.Float64frombits(0xfff8000000000000)

type dsKind uint8

const (
	dsGauge dsKind = iota
	dsCounter
	dsDerive
	dsAbsolute
	dsDCounter
	dsDDerive
	dsCompute
)

var dsKinds = map[string]dsKind{
	"GAUGE": dsGauge, "COUNTER": dsCounter, "DERIVE": dsDerive, "ABSOLUTE": dsAbsolute,
	"DCOUNTER": dsDCounter, "DDERIVE": dsDDerive, "COMPUTE": dsCompute,
}

type cfKind uint8

const (
	cfAverage cfKind = iota
	cfMin
	cfMax
	cfLast
)

var cfKinds = map[string]cfKind{"AVERAGE": cfAverage, "MIN": cfMin, "MAX": cfMax, "LAST": cfLast}

// plan is what the native path needs of a header, decoded once: the kind
// of each data source and archive, the RPN of each COMPUTE source, and
// the data sources an update's values go to without a template.
type plan struct {
	ds    []dsKind
	cf    []cfKind
	rpn   [][]rpnNode
	slots []int
}

// newPlan checks that the native path handles every part of h.
func newPlan(h *Header) (*plan, error) {
	p := &plan{ds: make([]dsKind, len(h.DS)), cf: make([]cfKind, len(h.RRA)), rpn: make([][]rpnNode, len(h.DS))}
	for i, d := range h.DS {
		k, ok := dsKinds[d.Type]
		if !ok {
			return nil, notNative(ReasonDSType, "data source %s has type %s", d.Name, d.Type)
		}
		p.ds[i] = k
		if k == dsCompute {
			nodes, err := compileRPN(h, i)
			if err != nil {
				return nil, err
			}
			p.rpn[i] = nodes
			continue
		}
		p.slots = append(p.slots, i)
	}
	for i, r := range h.RRA {
		k, ok := cfKinds[r.CF]
		if !ok {
			return nil, notNative(ReasonArchive, "archive %d is %s", i, r.CF)
		}
		if r.Rows == 0 || r.PDPs == 0 || r.PDPs > math.MaxInt32 {
			return nil, notNative(ReasonLayout, "archive %d has %d rows of %d steps", i, r.Rows, r.PDPs)
		}
		p.cf[i] = k
	}
	return p, nil
}

// stepper applies updates to a live head and collects the rows they fill.
type stepper struct {
	h *Header
	p *plan
	l live

	vals    []string  // this update's value of each data source
	pdpNew  []float64 // each source's rate × seconds since the last update
	openNew []float64 // its share of the PDP left open at the last update
	pdpTemp []float64 // the PDPs closed at the boundary reached
	steps   []uint64  // rows each archive gets
	stack   []float64
	// runs holds the rows written, archive by archive.
	runs []rowRun
}

// rowRun is the rows a batch wrote into one archive: consecutive in ring
// order from the row after first (the current row before the batch), n of
// them, their values in vals (ds_cnt each). A batch spanning more than
// the archive's rows writes some twice; only the last Rows of the run
// reach the file.
type rowRun struct {
	first uint64
	n     uint64
	vals  []float64
}

// add appends one row of values to r, an archive of rows rows of ds
// values, dropping rows overwritten since (so that a long gap costs at
// most twice the archive's size).
func (r *rowRun) add(row []float64, rows uint64, ds int) {
	r.vals = append(r.vals, row...)
	r.n++
	if extra := r.n - rows; r.n > 2*rows {
		r.vals = append(r.vals[:0], r.vals[int(extra)*ds:]...)
		r.first = (r.first + extra) % rows
		r.n = rows
	}
}

// last returns the rows of r that reach the file: where the first of
// them lies and their values.
func (r *rowRun) last(rows uint64, ds int) (start uint64, vals []float64) {
	skip := uint64(0)
	if r.n > rows {
		skip = r.n - rows
	}
	return (r.first + 1 + skip) % rows, r.vals[int(skip)*ds:]
}

func newStepper(h *Header, p *plan) *stepper {
	n := len(h.DS)
	return &stepper{
		h: h, p: p,
		vals: make([]string, n), pdpNew: make([]float64, n), openNew: make([]float64, n),
		pdpTemp: make([]float64, n), steps: make([]uint64, len(h.RRA)), stack: make([]float64, 0, maxRPNNodes),
		runs: make([]rowRun, len(h.RRA)),
	}
}

// reset makes s apply updates to the live head b.
func (s *stepper) reset(b []byte) {
	s.l.set(s.h, b)
	for r := range s.runs {
		s.runs[r] = rowRun{first: s.l.curRow(r), vals: s.runs[r].vals[:0]}
	}
}

// illegalTime is librrd's refusal of a time at or before the last update.
func illegalTime(path string, t, last int64) error {
	return &refusalError{fmt.Sprintf("%s: illegal attempt to update using time %d when last update time is %d (minimum one second step)", path, t, last)}
}

// refusalError is an update refused as librrd refuses it.
type refusalError struct{ msg string }

func (e *refusalError) Error() string { return e.msg }

func isRefusal(err error) bool {
	var r *refusalError
	return errors.As(err, &r)
}

// apply applies one update whose values are already in s.vals. A time at
// or before the last update gives refused (nothing changed); a value the
// native path does not take gives a *NotNativeError (s is then partly
// changed and must be thrown away).
func (s *stepper) apply(t, usec int64) (refused bool, err error) {
	last, lastUsec := s.l.lastUp(), s.l.lastUsec()
	if t < last || t == last && usec <= lastUsec {
		return true, nil
	}
	if last < 0 || lastUsec < 0 || lastUsec >= 1e6 {
		return false, notNative(ReasonLayout, "last update %d.%06d", last, lastUsec)
	}
	interval := float64(t-last) + float64(usec-lastUsec)/1e6
	if err := s.newPDPs(interval); err != nil {
		return false, err
	}
	elapsed, pre, post, procCnt := s.elapsedSteps(t, usec, interval)
	if elapsed == 0 {
		s.addToPDPs(interval)
		s.l.setLast(t, usec)
		return false, nil
	}
	// A gap closing several PDPs whose first was already open when the
	// file was last updated: that one is closed on its own first, with
	// its share of the new value.
	if open := uint64(pre) % s.h.Step; elapsed > 1 && open > 0 {
		for i, v := range s.pdpNew {
			if math.IsNaN(v) || interval <= 0 {
				s.openNew[i] = dnan
				continue
			}
			s.openNew[i] = float64(v*float64(open)) / interval
			s.pdpNew[i] = v - s.openNew[i]
		}
		s.closePDPs(float64(open), float64(open), 0, 1, s.openNew)
		s.consolidate(1, procCnt)
		s.writeRows()
		interval -= float64(open)
		pre -= float64(open)
		elapsed--
		procCnt++
	}
	s.closePDPs(interval, pre, post, elapsed, s.pdpNew)
	s.consolidate(elapsed, procCnt)
	s.writeRows()
	s.l.setLast(t, usec)
	return false, nil
}

// newPDPs turns this update's values into rate × seconds (pdpNew) and
// keeps each value as the data source's last_ds.
func (s *stepper) newPDPs(interval float64) error {
	for i := range s.h.DS {
		d := &s.h.DS[i]
		k := s.p.ds[i]
		hb := float64(d.Heartbeat())
		if hb < interval {
			s.l.setLastDS(i, "U")
		}
		v := s.vals[i]
		s.pdpNew[i] = dnan
		if (v == "" || v[0] != 'U') && k != dsCompute && hb >= interval {
			rate, err := s.newPDP(i, k, v, interval)
			if err != nil {
				return err
			}
			if !math.IsNaN(rate) && (!math.IsNaN(d.Max()) && rate > d.Max() || !math.IsNaN(d.Min()) && rate < d.Min()) {
				s.pdpNew[i] = dnan
			}
		}
		s.l.setLastDS(i, v)
	}
	return nil
}

// newPDP sets pdpNew[i] from value v of a data source of kind k and
// returns the rate checked against min and max.
func (s *stepper) newPDP(i int, k dsKind, v string, interval float64) (rate float64, err error) {
	last := s.l.lastDS(i)
	if n := bytes.IndexByte(last, 0); n >= 0 {
		last = last[:n]
	}
	lastKnown := s.l.lastDS(i)[0] != 'U'
	switch k {
	case dsCounter, dsDerive:
		a, small := SmallInteger(v)
		if !small && !integerString(v, k == dsDerive) {
			return 0, notNative(ReasonValue, "%s value %q of %s", s.h.DS[i].Type, v, s.h.DS[i].Name)
		}
		if !lastKnown {
			return dnan, nil
		}
		var d float64
		if b, ok := SmallInteger(last); small && ok {
			d = accumulate(a - b) // diffIntegers' result, without its scans
		} else {
			d = diffIntegers(v, last)
		}
		if k == dsCounter && d < 0 {
			// librrd's wrap: 2^32-1 (sic), then 2^64-2^32.
			if d += 4294967295.0; d < 0 {
				d += 18446744069414584320.0
			}
		}
		s.pdpNew[i] = d
		return d / interval, nil
	case dsGauge, dsAbsolute:
		x, ok := parseNumber(v)
		if !ok {
			return 0, notNative(ReasonValue, "%s value %q of %s", s.h.DS[i].Type, v, s.h.DS[i].Name)
		}
		if k == dsGauge {
			s.pdpNew[i] = x * interval
			return x, nil
		}
		s.pdpNew[i] = x
		return x / interval, nil
	default: // DCOUNTER, DDERIVE
		if !lastKnown {
			return dnan, nil
		}
		x, ok1 := parseNumber(v)
		old, ok2 := parseNumber(last)
		if !ok1 || !ok2 {
			return 0, notNative(ReasonValue, "%s value %q after %q of %s", s.h.DS[i].Type, v, last, s.h.DS[i].Name)
		}
		if k == dsDCounter && (x > 0 && old > x || x < 0 && x > old) {
			return dnan, nil // a reset: the direction changed
		}
		s.pdpNew[i] = x - old
		return s.pdpNew[i] / interval, nil
	}
}

// elapsedSteps returns how many step boundaries lie between the last
// update and t, the seconds before the last of them (pre) and after it
// (post), and the number of the PDP open at the last update.
func (s *stepper) elapsedSteps(t, usec int64, interval float64) (elapsed uint64, pre, post float64, procCnt uint64) {
	step := s.h.Step
	last := s.l.lastUp()
	procSt := uint64(last) - uint64(last)%step
	occuAge := uint64(t) % step
	occuSt := uint64(t) - occuAge
	pre, post = interval, 0
	if occuSt > procSt {
		pre = float64(int64(occuSt) - last)
		pre -= float64(s.l.lastUsec()) / 1e6
		post = float64(occuAge)
		post += float64(usec) / 1e6
	}
	return (occuSt - procSt) / step, pre, post, procSt / step
}

// addToPDPs adds pdpNew to the open PDPs: no boundary was passed.
func (s *stepper) addToPDPs(interval float64) {
	for i, v := range s.pdpNew {
		p := s.l.pdp(i)
		switch cur := p.val(pdpValue); {
		case math.IsNaN(v):
			p.setCnt(pdpUnknSec, uint64(float64(p.cnt(pdpUnknSec))+math.Floor(interval)))
		case math.IsNaN(cur):
			p.setVal(pdpValue, v)
		default:
			p.setVal(pdpValue, cur+v)
		}
	}
}

// closePDPs closes the open PDPs at the boundary reached (elapsed steps
// on): pdpTemp gets each one's rate, and the seconds after the boundary
// open the next.
func (s *stepper) closePDPs(interval, pre, post float64, elapsed uint64, pdpNew []float64) {
	diff := elapsed * s.h.Step
	for i, v := range pdpNew {
		p := s.l.pdp(i)
		preUnknown := 0.0
		if math.IsNaN(v) {
			preUnknown = pre
		} else {
			cur := p.val(pdpValue)
			if math.IsNaN(cur) {
				cur = 0
			}
			p.setVal(pdpValue, cur+float64(v/interval*pre))
		}
		unkn := p.cnt(pdpUnknSec)
		if interval > float64(s.h.DS[i].Heartbeat()) || float64(s.h.Step)/2.0 < float64(int32(unkn)) {
			s.pdpTemp[i] = dnan
		} else {
			s.pdpTemp[i] = p.val(pdpValue) / (float64(diff-unkn) - preUnknown)
		}
		if s.p.ds[i] == dsCompute {
			s.pdpTemp[i] = evalRPN(s.p.rpn[i], s.pdpTemp, s.stack)
		}
		if math.IsNaN(v) {
			p.setCnt(pdpUnknSec, uint64(math.Floor(post)))
			p.setVal(pdpValue, dnan)
		} else {
			p.setCnt(pdpUnknSec, 0)
			p.setVal(pdpValue, float64(v/interval*post))
		}
	}
}

// consolidate feeds the PDPs closed (pdpTemp, elapsed of them) to every
// archive's CDPs and sets how many rows each gets; procCnt is the number
// of the first PDP closed.
func (s *stepper) consolidate(elapsed, procCnt uint64) {
	for r := range s.h.RRA {
		ra := &s.h.RRA[r]
		start := ra.PDPs - procCnt%ra.PDPs // PDPs of this update in the first row
		s.steps[r] = 0
		if start <= elapsed {
			s.steps[r] = min((elapsed-start)/ra.PDPs+1, ra.Rows)
		}
		cdps := s.l.cdps(r)
		switch {
		case ra.PDPs > 1:
			s.updateCDPs(r, cdps, elapsed, start)
		case elapsed > 2:
			for i, pdp := range s.pdpTemp {
				c := cdpAt(cdps, i)
				c.setVal(cdpPrimary, pdp)
				c.setVal(cdpSecondary, pdp)
			}
		}
	}
	// An archive of one PDP a row takes the PDP as its row: as the primary
	// value, and for a second row as the secondary one (three or more were
	// set above).
	for j := elapsed; j > 0 && j < 3; j-- {
		k := cdpPrimary
		if j != elapsed {
			k = cdpSecondary
		}
		for r := range s.h.RRA {
			if s.h.RRA[r].PDPs != 1 {
				continue
			}
			cdps := s.l.cdps(r)
			for i, pdp := range s.pdpTemp {
				cdpAt(cdps, i).setVal(k, pdp)
			}
		}
	}
}

// updateCDPs feeds each data source's PDP to archive r's CDPs (cdps; an
// archive of several PDPs a row): start of the elapsed PDPs complete the
// current row.
func (s *stepper) updateCDPs(r int, cdps []byte, elapsed, start uint64) {
	ra := &s.h.RRA[r]
	cf := s.p.cf[r]
	if s.steps[r] == 0 {
		for i, pdp := range s.pdpTemp {
			c := cdpAt(cdps, i)
			if math.IsNaN(pdp) {
				c.setCnt(cdpUnknPDP, c.cnt(cdpUnknPDP)+elapsed)
			} else {
				c.setVal(cdpValue, addToCDP(cf, c.val(cdpValue), pdp, elapsed))
			}
		}
		return
	}
	into := (elapsed - start) % ra.PDPs
	for i, pdp := range s.pdpTemp {
		c := cdpAt(cdps, i)
		unkn := c.cnt(cdpUnknPDP)
		if math.IsNaN(pdp) {
			unkn += start
			c.setCnt(cdpUnknPDP, unkn)
			c.setVal(cdpSecondary, dnan)
		} else {
			c.setVal(cdpSecondary, pdp)
		}
		if float64(unkn) > float64(ra.PDPs)*ra.XFF() {
			c.setVal(cdpPrimary, dnan)
		} else {
			c.setVal(cdpPrimary, firstRow(cf, c.val(cdpValue), pdp, start, ra.PDPs-unkn))
		}
		c.setVal(cdpValue, carryOver(cf, pdp, into))
		if math.IsNaN(pdp) {
			c.setCnt(cdpUnknPDP, into)
		} else {
			c.setCnt(cdpUnknPDP, 0)
		}
	}
}

// firstRow is the value of the row a CDP completes: its value so far (cum)
// and start more PDPs of pdp, known PDPs of them.
func firstRow(cf cfKind, cum, pdp float64, start, known uint64) float64 {
	switch cf {
	case cfAverage:
		return (ifNaN(cum, 0) + float64(ifNaN(pdp, 0)*float64(start))) / float64(known)
	case cfMax:
		if c, p := ifNaN(cum, math.Inf(-1)), ifNaN(pdp, math.Inf(-1)); p > c {
			return p
		} else {
			return c
		}
	case cfMin:
		if c, p := ifNaN(cum, math.Inf(1)), ifNaN(pdp, math.Inf(1)); p < c {
			return p
		} else {
			return c
		}
	}
	return pdp
}

// carryOver is the value so far of the CDP opened by the into PDPs after
// the last row completed.
func carryOver(cf cfKind, pdp float64, into uint64) float64 {
	if into == 0 || math.IsNaN(pdp) {
		switch cf {
		case cfMax:
			return math.Inf(-1)
		case cfMin:
			return math.Inf(1)
		case cfAverage:
			return 0
		}
		return dnan
	}
	if cf == cfAverage {
		return pdp * float64(into)
	}
	return pdp
}

// addToCDP adds n PDPs of pdp to a CDP's value so far, cum.
func addToCDP(cf cfKind, cum, pdp float64, n uint64) float64 {
	if math.IsNaN(cum) {
		if cf == cfAverage {
			pdp *= float64(n)
		}
		return pdp
	}
	switch cf {
	case cfAverage:
		return cum + float64(pdp*float64(n))
	case cfMin:
		if pdp < cum {
			return pdp
		}
		return cum
	case cfMax:
		if pdp > cum {
			return pdp
		}
		return cum
	}
	return pdp
}

func ifNaN(v, alt float64) float64 {
	if math.IsNaN(v) {
		return alt
	}
	return v
}

// writeRows moves each archive's current row on by the rows it gets and
// records their values: the primary value first, the secondary after.
func (s *stepper) writeRows() {
	for r := range s.h.RRA {
		ra := &s.h.RRA[r]
		for n := uint64(0); n < s.steps[r]; n++ {
			row := s.l.curRow(r) + 1
			if row >= ra.Rows {
				row = 0
			}
			s.l.setCurRow(r, row)
			k := cdpPrimary
			if n > 0 {
				k = cdpSecondary
			}
			cdps := s.l.cdps(r)
			for i := range s.pdpTemp {
				s.openNew[i] = cdpAt(cdps, i).val(k) // openNew is free here
			}
			s.runs[r].add(s.openNew, ra.Rows, len(s.h.DS))
		}
	}
}
