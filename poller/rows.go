package poller

import (
	"math"
	"strings"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/mib"
	"github.com/spoold/spoold/spool"
)

// OIDIfOperStatus is IF-MIB's ifOperStatus column: a table column polled
// from it gives its rows' state (RowStatus.State).
const OIDIfOperStatus = "1.3.6.1.2.1.2.2.1.8"

// Row states besides ifOperStatus's labels (up, down, testing, ...).
const (
	// RowGone is a row an earlier discovery found and the last did not:
	// its file stays, its key comes back if the row does.
	RowGone = "gone"
)

// RowStatus is one row of a device's tables as the poller knows it: what
// its last discovery found, and its state at the last poll.
type RowStatus struct {
	Table string // the table's name; "" for a gone row
	Key   string
	Index string // "" for a gone row
	// Name is the instance name; for a gone row, the one its key was
	// made from ("" if the key does not give it back, see InstanceName).
	Name  string
	Alias string // the Table.Alias column at discovery
	// State is ifOperStatus's label at the last poll ("up", "down",
	// "lowerLayerDown", ...) for a table that polls it; "" if it does not,
	// before the row's first poll, or for a value not answered; RowGone.
	State string
}

// rowStates are the ifOperStatus values of a plan's rows at one poll, in
// the plan's table and row order (0: no value, or the table has no such
// column).
type rowStates struct {
	plan   *pollPlan
	states []uint8
}

// stateColumn returns the position of t's ifOperStatus column, -1 if none.
func stateColumn(t *fleet.Table) int {
	for i := range t.Columns {
		if t.Columns[i].Alternatives[0] == OIDIfOperStatus {
			return i
		}
	}
	return -1
}

// keepStates records the state of pl's rows from an answered poll's values.
func (d *device) keepStates(pl *pollPlan, values []spool.Value) {
	if len(pl.tables) == 0 {
		return
	}
	rs := &rowStates{plan: pl, states: make([]uint8, 0, pl.rowCount())}
	for _, t := range pl.tables {
		c := stateColumn(t.table)
		for i := range t.rows {
			var s uint8
			if at := t.rowAt(i) + c; c >= 0 && at < len(values) {
				if v := values[at]; v.Type == spool.Gauge && v.Gauge >= 1 && v.Gauge <= math.MaxUint8 {
					s = uint8(v.Gauge)
				}
			}
			rs.states = append(rs.states, s)
		}
	}
	d.states.Store(rs)
}

// stateOf returns the state label of ifOperStatus value v ("" for 0).
func stateOf(v uint8) string {
	if v == 0 {
		return ""
	}
	if o, _ := mib.Builtin().ObjectAt(OIDIfOperStatus); o != nil {
		if l, ok := o.EnumLabel(int64(v)); ok {
			return l
		}
	}
	return ""
}

// Rows returns the rows of the named device: those of its last discovery
// in table and index order, then the gone ones in key order; false for a
// device the poller does not poll. Before the first discovery it has none.
func (p *Poller) Rows(name string) ([]RowStatus, bool) {
	p.mu.RLock()
	d := p.byName[name]
	p.mu.RUnlock()
	if d == nil {
		return nil, false
	}
	states := map[string]uint8{}
	if rs := d.states.Load(); rs != nil {
		i := 0
		for _, t := range rs.plan.tables {
			for _, r := range t.rows {
				states[r.Key] = rs.states[i]
				i++
			}
		}
	}
	var out []RowStatus
	if disc := d.plan.Load().disc; disc != nil {
		for _, t := range disc.Tables {
			for _, r := range t.Rows {
				out = append(out, RowStatus{Table: t.Table.Name, Key: r.Key, Index: r.Index, Name: r.Name,
					Alias: r.Alias, State: stateOf(states[r.Key])})
			}
		}
	}
	for _, k := range d.status().GoneRows {
		_, rest := fleet.SplitKey(k)
		seg := rest[strings.LastIndexByte(rest, '/')+1:]
		n, _ := fleet.InstanceName(seg)
		out = append(out, RowStatus{Key: k, Name: n, State: RowGone})
	}
	return out, true
}
