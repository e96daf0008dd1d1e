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
	oids     []string    // Get OIDs: scalars, sysUpTime.0 if not among them, then the Get-polled cells
	pos      []int       // per OID: its value's position, -1 for the added sysUpTime.0
	uptimeAt int         // index of sysUpTime.0 in oids
	valueDS  []*fleet.DS // per value: its data source
	nScalar  int
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
	rows  []planRow // in index order
	bulk  bool      // walked with GetBulk, not asked with Gets
	cols  []string  // bulk: the columns walked (the alternatives the rows chose)
	last  string    // bulk: the last row's index
	after string    // bulk: the walk starts after this index ("": at the first row); see tablePlan.runs
}

// planRow is one polled row: its key and values, and in bulk mode the
// walked column of each of its table's columns (-1: not polled, the row
// answered no alternative).
type planRow struct {
	key   string
	index string
	at    int // position of its first value
	cols  []int
}

// newPlan builds the plan of target t with discovery disc (nil: scalars
// only); prev is the plan it replaces (nil if none).
func newPlan(t *fleet.Target, disc *Discovery, prev *pollPlan, o *Options) *pollPlan {
	pl := &pollPlan{uptimeAt: -1, nScalar: len(t.Profile.DS), disc: disc}
	for i := range t.Profile.DS {
		pl.oids = append(pl.oids, t.Profile.DS[i].OID)
		pl.pos = append(pl.pos, i)
		pl.valueDS = append(pl.valueDS, &t.Profile.DS[i])
		if t.Profile.DS[i].OID == OIDSysUpTime {
			pl.uptimeAt = i
		}
	}
	if pl.uptimeAt < 0 {
		pl.uptimeAt = len(pl.oids)
		pl.oids = append(pl.oids, OIDSysUpTime)
		pl.pos = append(pl.pos, -1)
	}
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
	tp := tablePlan{table: td.Table, bulk: useBulk(td, o)}
	for _, r := range td.Rows {
		pr := planRow{key: r.Key, index: r.Index, at: len(pl.valueDS)}
		for i := range td.Table.Columns {
			pl.valueDS = append(pl.valueDS, &td.Table.Columns[i].DS)
			if tp.bulk {
				k := -1
				if r.Alternative[i] >= 0 {
					if k = slices.Index(tp.cols, r.Columns[i]); k < 0 {
						tp.cols, k = append(tp.cols, r.Columns[i]), len(tp.cols)
					}
				}
				pr.cols = append(pr.cols, k)
			} else if r.Alternative[i] >= 0 {
				pl.oids = append(pl.oids, r.Columns[i]+"."+r.Index)
				pl.pos = append(pl.pos, pr.at+i)
			}
		}
		tp.rows = append(tp.rows, pr)
		tp.last = r.Index
	}
	return tp
}

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
	for _, rows := range [][]Row{td.Filtered, td.OverLimit} {
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
	old := map[string][]string{}
	for _, t := range prev.disc.Tables {
		for _, r := range t.Rows {
			old[r.Key] = r.Columns
		}
	}
	var changed map[string]bool
	for _, t := range pl.disc.Tables {
		for _, r := range t.Rows {
			if cols, ok := old[r.Key]; ok && !slices.Equal(cols, r.Columns) {
				if changed == nil {
					changed = map[string]bool{}
				}
				changed[r.Key] = true
			}
		}
	}
	return changed
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
		for _, r := range t.rows {
			if !slices.Contains(missing[r.at:r.at+n], false) {
				return true
			}
		}
	}
	return false
}
