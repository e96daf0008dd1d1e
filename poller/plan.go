package poller

import (
	"slices"
	"sync/atomic"

	"github.com/spoold/spoold/fleet"
)

// OIDSysUpTime is sysUpTime.0, which every poll asks for (with the
// profile's values if they have it) to see an agent restart.
const OIDSysUpTime = "1.3.6.1.2.1.1.3.0"

// pollPlan is what one poll of a device asks for and where each answer
// goes, built from the profile and the device's last completed discovery.
// Values are laid out as the scalars, then each polled row's columns.
// A plan is immutable once built (but for used).
type pollPlan struct {
	// oids are the first Get OIDs of every poll: the scalars, and
	// sysUpTime.0 if not among them; a poll adds those of the cells it
	// asks with Gets (getList). pos is per OID its value's position, -1
	// for the added sysUpTime.0.
	oids     []string
	pos      []int
	uptimeAt int        // index of sysUpTime.0 in oids
	nGets    int        // a poll's Get OIDs: oids and the Get-polled cells
	scalars  []fleet.DS // the profile's: the first values
	nValues  int
	tables   []tablePlan
	disc     *Discovery // nil before the first discovery
	// flagged are the rows whose chosen alternatives changed since the
	// previous plan: their first entry of this plan is a discontinuity.
	flagged map[string]bool
	used    atomic.Bool // a poll has used the plan (flagged rows were flagged)
}

// tablePlan is how one table's rows are polled.
type tablePlan struct {
	table *fleet.Table
	rows  []Row    // the discovery's polled rows, in index order
	at    int      // position of the first row's first value: row i's are at at+i*len(table.Columns)
	bulk  bool     // walked with GetBulk, not asked with Gets
	cols  []string // bulk: the columns walked (the alternatives the rows chose)
	// walked is, in bulk, per table column and alternative, its position
	// in cols (-1: no row chose it).
	walked [][]int
	last   string // bulk: the last row's index
	after  string // bulk: the walk starts after this index ("": at the first row); see tablePlan.runs
}

// newPlan builds the plan of target t with discovery disc (nil: scalars
// only); prev is the plan it replaces (nil if none).
func newPlan(t *fleet.Target, disc *Discovery, prev *pollPlan, o *Options) *pollPlan {
	pl := &pollPlan{uptimeAt: -1, scalars: t.Profile.DS, nValues: len(t.Profile.DS), disc: disc}
	for i := range t.Profile.DS {
		pl.oids = append(pl.oids, t.Profile.DS[i].OID)
		pl.pos = append(pl.pos, i)
		if t.Profile.DS[i].OID == OIDSysUpTime {
			pl.uptimeAt = i
		}
	}
	if pl.uptimeAt < 0 {
		pl.uptimeAt = len(pl.oids)
		pl.oids = append(pl.oids, OIDSysUpTime)
		pl.pos = append(pl.pos, -1)
	}
	pl.nGets = len(pl.oids)
	if disc == nil {
		return pl
	}
	for i := range disc.Tables {
		pl.tables = append(pl.tables, pl.planTable(&disc.Tables[i], o))
	}
	pl.flagged = changedRows(prev, pl)
	return pl
}

func (pl *pollPlan) planTable(td *TableDiscovery, o *Options) tablePlan {
	t := td.Table
	n := len(t.Columns)
	tp := tablePlan{table: t, rows: td.Rows, at: pl.nValues, bulk: useBulk(td, o)}
	pl.nValues += len(td.Rows) * n
	if len(td.Rows) > 0 {
		tp.last = td.Rows[len(td.Rows)-1].Index
	}
	if tp.bulk {
		tp.walked = make([][]int, n)
		for i, c := range t.Columns {
			tp.walked[i] = slices.Repeat([]int{-1}, len(c.Alternatives))
		}
	}
	for k := range td.Rows {
		r := &td.Rows[k]
		for i, a := range r.Alternative() {
			switch {
			case a < 0:
			case tp.bulk && tp.walked[i][a] < 0:
				c := r.column(t, i)
				if tp.walked[i][a] = slices.Index(tp.cols, c); tp.walked[i][a] < 0 {
					tp.cols, tp.walked[i][a] = append(tp.cols, c), len(tp.cols)
				}
			case !tp.bulk:
				pl.nGets++
			}
		}
	}
	return tp
}

// getList is the Get OIDs of one poll with plan pl and, per OID, its
// value's position (-1 for the added sysUpTime.0).
type getList struct {
	pl   *pollPlan
	oids []string
	pos  []int
}

// gets returns the Get OIDs of a poll: pl.oids, then the cells of the
// tables polled with Gets, each row's in column order (those of a column
// the row answered no alternative of left out). The cells' are made for
// each poll: kept, they would weigh more than the rest of the plan.
func (pl *pollPlan) gets() getList {
	if pl.nGets == len(pl.oids) {
		return getList{pl: pl, oids: pl.oids, pos: pl.pos}
	}
	gl := getList{pl: pl, oids: make([]string, 0, pl.nGets), pos: make([]int, 0, pl.nGets)}
	gl.oids, gl.pos = append(gl.oids, pl.oids...), append(gl.pos, pl.pos...)
	for i := range pl.tables {
		tp := &pl.tables[i]
		if tp.bulk {
			continue
		}
		for k := range tp.rows {
			r := &tp.rows[k]
			for c, a := range r.Alternative() {
				if a >= 0 {
					gl.oids = append(gl.oids, r.column(tp.table, c)+"."+r.Index)
					gl.pos = append(gl.pos, tp.rowAt(k)+c)
				}
			}
		}
	}
	return gl
}

// ds returns the data source of value at.
func (pl *pollPlan) ds(at int) *fleet.DS {
	if at < len(pl.scalars) {
		return &pl.scalars[at]
	}
	i := len(pl.tables) - 1
	for pl.tables[i].at > at {
		i--
	}
	tp := &pl.tables[i]
	return &tp.table.Columns[(at-tp.at)%len(tp.table.Columns)].DS
}

// rowAt returns the position of the first value of tp's row i.
func (tp *tablePlan) rowAt(i int) int { return tp.at + i*len(tp.table.Columns) }

// useBulk decides a table's poll mode: in auto, GetBulk when its walk of
// the rows' span takes fewer round trips than Gets of their cells.
func useBulk(td *TableDiscovery, o *Options) bool {
	switch o.TableMode {
	case TableGet:
		return false
	case TableBulk:
		return true
	}
	if len(td.Rows) == 0 || len(td.Table.Columns) > o.MaxVarbinds {
		return false
	}
	cells := len(td.Rows) * len(td.Table.Columns)
	gets := (cells + o.MaxVarbinds - 1) / o.MaxVarbinds
	// The walk passes the rows not polled before the last polled one too.
	last := td.Rows[len(td.Rows)-1].Index
	span := len(td.Rows)
	for _, rows := range [][]NotPolled{td.Filtered, td.OverLimit} {
		for _, r := range rows {
			if compareOID(r.Index, last) < 0 {
				span++
			}
		}
	}
	bulks := (span + o.MaxRepetitions - 1) / o.MaxRepetitions
	return bulks < gets
}

// changedRows returns the rows of pl whose chosen alternatives differ from
// those of the same key in prev (a counter that changed its source: its
// next rate would be a spike).
func changedRows(prev, pl *pollPlan) map[string]bool {
	if prev == nil || prev.disc == nil {
		return nil
	}
	type chosen struct {
		t *fleet.Table
		r *Row
	}
	old := map[string]chosen{}
	for _, t := range prev.disc.Tables {
		for i := range t.Rows {
			old[t.Rows[i].Key] = chosen{t.Table, &t.Rows[i]}
		}
	}
	var changed map[string]bool
	for _, t := range pl.disc.Tables {
		for i := range t.Rows {
			r := &t.Rows[i]
			if was, ok := old[r.Key]; ok && !sameColumns(was.t, was.r, t.Table, r) {
				if changed == nil {
					changed = map[string]bool{}
				}
				changed[r.Key] = true
			}
		}
	}
	return changed
}

// sameColumns reports whether row a of table ta and row b of tb are
// polled for the same column OIDs.
func sameColumns(ta *fleet.Table, a *Row, tb *fleet.Table, b *Row) bool {
	if len(a.Alternative()) != len(b.Alternative()) {
		return false
	}
	for i := range a.Alternative() {
		if a.column(ta, i) != b.column(tb, i) {
			return false
		}
	}
	return true
}

// rowCount returns the rows the plan polls.
func (pl *pollPlan) rowCount() int {
	n := 0
	for _, t := range pl.tables {
		n += len(t.rows)
	}
	return n
}

// lostRow reports whether a row that answered at discovery answers none
// of its polled cells now (missing: per value): it is gone, or the rows
// were renumbered. One column a row never had is not enough.
func (pl *pollPlan) lostRow(missing []bool) bool {
	for _, t := range pl.tables {
		n := len(t.table.Columns)
		for i := range t.rows {
			if at := t.rowAt(i); !slices.Contains(missing[at:at+n], false) {
				return true
			}
		}
	}
	return false
}
