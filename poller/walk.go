package poller

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gosnmp/gosnmp"
)

// cell is one value of a table column: the row's index (the OID suffix
// after the column) and the varbind.
type cell struct {
	index string
	pdu   gosnmp.SnmpPDU
}

// columnWalk is what a walk found in one column, in index order.
type columnWalk struct {
	cells     []cell // none with walkLimits.each
	found     int    // the cells found
	truncated bool   // stopped at walkLimits.maxRows
}

// walkLimits bound a walk.
type walkLimits struct {
	maxReps int    // GetBulk max-repetitions
	maxRows int    // most cells kept per column
	rows    int    // if set, the rows a column is expected to have: the cells' room, one array for all columns
	last    string // if set, a column ends at the first index not before it
	after   string // if set, each column's walk starts after this index
	// nonRep are OIDs asked once, as the non-repeaters of the first
	// GetBulk (the GetNext of each: sysUpTime for sysUpTime.0); their
	// answers are the walk's first return value's extra (v2c and v3 only).
	nonRep []string
	// each, if set, takes each cell of column c (an index of cols) as it
	// comes, in index order within the column, instead of the walk
	// keeping them all: a poll holds only what it stores of an answer
	// while it waits for the next. pdu is each's only for the call.
	each func(c int, index string, pdu *gosnmp.SnmpPDU)
}

// errWalk is wrapped by walk errors of an agent that breaks GetNext's
// order (an OID that does not increase) or answers nothing.
var errWalk = errors.New("agent breaks the walk")

// walkColumns walks the columns cols side by side: each request (a GetBulk
// of max-repetitions maxReps for v2c and v3, a GetNext for v1) asks for the
// next OIDs of every column not yet ended. A column ends when the agent
// leaves its subtree, says endOfMibView (v1: noSuchName), gives maxRows
// cells, or reaches limits.last. It returns the cells of each column and
// the requests sent. Every request moves at least one column forward, so
// a walk sends at most maxRows+1 requests per column.
func walkColumns(g *gosnmp.GoSNMP, cols []string, lim walkLimits) ([]columnWalk, int, error) {
	out, _, n, err := walkColumnsWith(g, cols, lim)
	return out, n, err
}

// walkColumnsWith is walkColumns that also returns the answers to
// lim.nonRep.
func walkColumnsWith(g *gosnmp.GoSNMP, cols []string, lim walkLimits) ([]columnWalk, []gosnmp.SnmpPDU, int, error) {
	out := make([]columnWalk, len(cols))
	if r := min(lim.rows, lim.maxRows); r > 0 && lim.each == nil {
		all := make([]cell, r*len(cols))
		for i := range out {
			out[i].cells = all[i*r : i*r : (i+1)*r]
		}
	}
	var extra []gosnmp.SnmpPDU
	next := append([]string(nil), cols...)
	if lim.after != "" {
		for i := range next {
			next[i] += "." + lim.after
		}
	}
	active := make([]int, len(cols))
	for i := range active {
		active[i] = i
	}
	requests := 0
	for len(active) > 0 {
		oids := make([]string, len(active))
		for i, c := range active {
			oids[i] = next[c]
		}
		var pkt *gosnmp.SnmpPacket
		var err error
		nonRep := 0
		switch {
		case g.Version == gosnmp.Version1:
			pkt, err = g.GetNext(oids)
		case requests == 0 && len(lim.nonRep) > 0:
			nonRep = len(lim.nonRep)
			pkt, err = g.GetBulk(append(append([]string(nil), lim.nonRep...), oids...), uint8(nonRep), uint32(lim.maxReps))
		default:
			pkt, err = g.GetBulk(oids, 0, uint32(lim.maxReps))
		}
		requests++
		if err != nil {
			return nil, nil, requests, fmt.Errorf("walk %d columns from %s:%d: %w", len(oids), g.Target, g.Port, err)
		}
		if nonRep > 0 && pkt.Error == gosnmp.NoError {
			k := min(nonRep, len(pkt.Variables))
			extra, pkt.Variables = pkt.Variables[:k:k], pkt.Variables[k:]
		}
		if pkt.Error == gosnmp.NoSuchName && g.Version == gosnmp.Version1 && pkt.ErrorIndex >= 1 && int(pkt.ErrorIndex) <= len(active) {
			k := int(pkt.ErrorIndex) - 1 // v1's end of the MIB view for that column
			active = append(active[:k:k], active[k+1:]...)
			continue
		}
		if pkt.Error != gosnmp.NoError {
			return nil, nil, requests, fmt.Errorf("walk %d columns from %s:%d: %w: %v at varbind %d", len(oids), g.Target, g.Port, errAgent, pkt.Error, pkt.ErrorIndex)
		}
		if active, err = takeWalkAnswer(pkt.Variables, cols, next, active, out, lim); err != nil {
			return nil, nil, requests, fmt.Errorf("walk %d columns from %s:%d: %w", len(oids), g.Target, g.Port, err)
		}
	}
	return out, extra, requests, nil
}

// takeWalkAnswer files the varbinds of one answer (repetition r of column
// active[c] at r*len(active)+c) into out, moves next on, and returns the
// columns still active.
func takeWalkAnswer(vars []gosnmp.SnmpPDU, cols, next []string, active []int, out []columnWalk, lim walkLimits) ([]int, error) {
	n := len(active)
	ended := make([]bool, n)
	moved := false
	for i := range vars {
		k := i % n
		if ended[k] {
			continue
		}
		c := active[k]
		v := &vars[i]
		name := strings.TrimPrefix(v.Name, ".")
		if v.Type == gosnmp.EndOfMibView || !strings.HasPrefix(name, cols[c]+".") || len(name) == len(cols[c])+1 {
			ended[k], moved = true, true
			continue
		}
		idx := name[len(cols[c])+1:]
		// next[c] is the column or an OID in it: compare the indexes only.
		if prev := next[c]; len(prev) > len(cols[c]) && compareOID(idx, prev[len(cols[c])+1:]) <= 0 {
			return nil, fmt.Errorf("%w: %s after %s", errWalk, name, prev)
		}
		if lim.each != nil {
			lim.each(c, idx, v)
		} else {
			out[c].cells = append(out[c].cells, cell{index: idx, pdu: *v})
		}
		out[c].found++
		next[c], moved = name, true
		switch {
		case out[c].found >= lim.maxRows:
			ended[k], out[c].truncated = true, true
		case lim.last != "" && compareOID(idx, lim.last) >= 0:
			ended[k] = true
		}
	}
	if !moved {
		return nil, fmt.Errorf("%w: an answer of %d varbinds moves no column on", errWalk, len(vars))
	}
	still := active[:0:0]
	for k, c := range active {
		if !ended[k] {
			still = append(still, c)
		}
	}
	return still, nil
}

// compareOID compares two numeric OIDs (or index suffixes) arc by arc:
// -1, 0 or 1. An OID that is a prefix of the other is before it.
func compareOID(a, b string) int {
	for a != "" && b != "" {
		var x, y string
		x, a, _ = strings.Cut(a, ".")
		y, b, _ = strings.Cut(b, ".")
		if len(x) != len(y) { // arcs have no leading zeros
			if len(x) < len(y) {
				return -1
			}
			return 1
		}
		if c := strings.Compare(x, y); c != 0 {
			return c
		}
	}
	switch {
	case a == "" && b == "":
		return 0
	case a == "":
		return -1
	}
	return 1
}
