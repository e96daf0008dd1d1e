package poller

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/internal/snmpvalue"
)

// Row is one row of a table that discovery found.
type Row struct {
	Index string // the OID suffix after the column: "3", "10101", "1.4"
	Name  string // the instance name ("" if the row has none)
	Key   string // its spool key and RRD file ("" for a filtered-out row)
	Alias string // the row's Table.Alias column as text ("" if none)
	// alt is Alternative's: shared by the rows that chose alike, and
	// kept as a pointer, 8 bytes a row, not a slice's 24.
	alt *[]int
}

// Alternative is, per column of the table, which of its alternatives
// (column OIDs) the row answered first and is polled for (0: the first);
// -1 when it answered none (its values are unknown). The rows of a table
// that chose alike share one slice: it is read-only. A row a filter
// dropped has none.
func (r *Row) Alternative() []int {
	if r.alt == nil {
		return nil
	}
	return *r.alt
}

// NotPolled is a row discovery found and does not poll, and why: a filter
// it fails, or the target's bound on files. Why is kept beside the rows
// not polled only, not in every polled row a poller keeps.
type NotPolled struct {
	Row
	Why string
}

// TableDiscovery is what discovery found in one table of a profile.
type TableDiscovery struct {
	Table *fleet.Table
	// Walked are the columns discovery walked, in walk order, with the
	// rows that answered each: the table's rows are every index any of
	// them answered.
	Walked []WalkedColumn
	Rows   []Row // polled rows, in index order
	// Filtered are the rows the filters dropped, in index order.
	Filtered []NotPolled
	// OverLimit are the rows of keys new to the target that its bounds on
	// files refused (filebound.go), in index order: not polled.
	OverLimit []NotPolled
	// Truncated says the table has more than Options.MaxTableRows rows:
	// only the first are kept.
	Truncated bool
}

// WalkedColumn is one column a discovery walked: its OID, without the
// index, and how many rows answered it.
type WalkedColumn struct {
	OID  string
	Rows int
}

// Empty reports whether the table has no row at all: no column walked
// answered one (rows a filter dropped or a bound refused are rows).
func (td *TableDiscovery) Empty() bool {
	return len(td.Rows)+len(td.Filtered)+len(td.OverLimit) == 0
}

// Discovery is what one discovery of a device found.
type Discovery struct {
	At       time.Time
	Tables   []TableDiscovery
	Requests int // SNMP requests sent
	Duration time.Duration
}

// Keys returns the keys of the polled rows, in table and index order.
func (d *Discovery) Keys() []string {
	var keys []string
	for _, t := range d.Tables {
		for _, r := range t.Rows {
			keys = append(keys, r.Key)
		}
	}
	return keys
}

// discover walks the tables of d's profile: per table, one side-by-side
// walk of the index, instance, alias and filter columns and of the first
// alternative of every column that has alternatives (planWalk); then Gets
// of the further alternatives for the rows that lack the first.
func (p *Poller) discover(ctx context.Context, d *device) (*Discovery, error) {
	g, err := p.connect(ctx, d, false)
	if err != nil {
		return nil, err
	}
	defer p.disconnect(g)
	g.MaxOids = MaxVarbinds
	start := time.Now()
	disc := &Discovery{At: p.now()}
	for _, t := range d.t.Profile.Tables {
		var td TableDiscovery
		td, err = p.discoverTable(g, d, t, &disc.Requests)
		if err != nil {
			break
		}
		disc.Tables = append(disc.Tables, td)
	}
	if d.t.V3 != nil {
		d.keepUSM(g, time.Now())
	}
	p.disc.requests.Add(int64(disc.Requests))
	if err != nil {
		return nil, err
	}
	disc.Duration = time.Since(start)
	return disc, nil
}

// walkPlan is the columns one table's discovery walks and where each
// part of a row is found among them.
type walkPlan struct {
	cols     []string
	instance []int // positions of the instance columns
	alias    int   // position of the alias column, -1 if the table has none
	filters  []int // per filter: position of its column, -1 for the instance name
	alts     []int // per table column: position of its first alternative, -1 if it has none
}

// planWalk lists the columns walked to discover t's rows: its index
// column if it names one, its instance, alias and filter columns, the
// first alternative of each column that has alternatives, and, if none of
// its columns is among those, its first column's first alternative (so
// that a table whose index column is not readable, as SMIv2 tables often
// declare it, still finds the rows its values answer for).
func planWalk(t *fleet.Table) walkPlan {
	var wp walkPlan
	at := func(oid string) int {
		if i := slices.Index(wp.cols, oid); i >= 0 {
			return i
		}
		wp.cols = append(wp.cols, oid)
		return len(wp.cols) - 1
	}
	if t.Index != "" {
		at(t.Index)
	}
	for _, c := range t.Instance {
		wp.instance = append(wp.instance, at(c))
	}
	wp.alias = -1
	if t.Alias != "" {
		wp.alias = at(t.Alias)
	}
	for _, f := range t.Filters {
		k := -1
		if f.Column != "" {
			k = at(f.Column)
		}
		wp.filters = append(wp.filters, k)
	}
	for _, c := range t.Columns {
		k := -1
		if len(c.Alternatives) > 1 {
			k = at(c.Alternatives[0])
		}
		wp.alts = append(wp.alts, k)
	}
	if !slices.ContainsFunc(t.Columns, func(c fleet.Column) bool { return slices.Contains(wp.cols, c.Alternatives[0]) }) {
		at(t.Columns[0].Alternatives[0])
	}
	return wp
}

// rowIndexes returns the rows of a table from its walked columns: every
// index any column answered, in index order, as net-snmp's snmptable finds
// them (an index column is one column among them: ifXTable has none of its
// own, and many agents answer none). At most maxRows stay: the first, all
// within the cells of a column cut at maxRows, so that none lacks its value.
func rowIndexes(walked []columnWalk, maxRows int) (rows []string, truncated bool) {
	seen := map[string]bool{}
	for _, w := range walked {
		for _, c := range w.cells {
			if !seen[c.index] {
				seen[c.index] = true
				rows = append(rows, c.index)
			}
		}
		truncated = truncated || w.truncated
	}
	slices.SortFunc(rows, compareOID)
	if len(rows) > maxRows {
		rows, truncated = rows[:maxRows], true
	}
	for i := range rows {
		rows[i] = strings.Clone(rows[i]) // not the suffix of a varbind's name, which it would keep
	}
	return rows, truncated
}

func (p *Poller) discoverTable(g *gosnmp.GoSNMP, d *device, t *fleet.Table, requests *int) (TableDiscovery, error) {
	wp := planWalk(t)
	walked, n, err := walkColumns(g, wp.cols, walkLimits{maxReps: p.opts.MaxRepetitions, maxRows: p.opts.MaxTableRows})
	*requests += n
	if err != nil {
		return TableDiscovery{}, fmt.Errorf("discover table %s: %w", t.Name, err)
	}
	td := TableDiscovery{Table: t}
	byCol := make([]map[string]*gosnmp.SnmpPDU, len(wp.cols))
	for i, w := range walked {
		byCol[i] = make(map[string]*gosnmp.SnmpPDU, len(w.cells))
		for j := range w.cells {
			byCol[i][w.cells[j].index] = &w.cells[j].pdu
		}
		td.Walked = append(td.Walked, WalkedColumn{OID: wp.cols[i], Rows: len(w.cells)})
	}
	var indexes []string
	indexes, td.Truncated = rowIndexes(walked, p.opts.MaxTableRows)
	rows := make([]Row, 0, len(indexes))
	for _, index := range indexes {
		r := Row{Index: index}
		for _, k := range wp.instance {
			if v := byCol[k][index]; v != nil && !snmpvalue.None(v.Type) {
				if r.Name = snmpvalue.Text(v); r.Name != "" {
					break
				}
			}
		}
		if t.Instance == nil {
			r.Name = index
		}
		if wp.alias >= 0 {
			if v := byCol[wp.alias][index]; v != nil && !snmpvalue.None(v.Type) {
				r.Alias = snmpvalue.Text(v)
			}
		}
		if why := filterRow(t, wp, byCol, &r); why != "" {
			td.Filtered = append(td.Filtered, NotPolled{Row: r, Why: why})
			continue
		}
		rows = append(rows, r)
	}
	switch {
	case len(rows) == 0:
	case len(rows) < cap(rows):
		td.Rows = slices.Clone(rows) // no room kept for the rows filtered out
	default:
		td.Rows = rows
	}
	n, err = p.chooseAlternatives(g, d, t, wp, byCol, td.Rows)
	*requests += n
	if err != nil {
		return TableDiscovery{}, fmt.Errorf("discover table %s: %w", t.Name, err)
	}
	nameRows(d.t.Name, t, td.Rows)
	return td, nil
}

// filterRow returns why r fails a filter of t, or "".
func filterRow(t *fleet.Table, wp walkPlan, byCol []map[string]*gosnmp.SnmpPDU, r *Row) string {
	for i := range t.Filters {
		f := &t.Filters[i]
		var v *gosnmp.SnmpPDU
		if k := wp.filters[i]; k >= 0 {
			v = byCol[k][r.Index]
		} else {
			v = &gosnmp.SnmpPDU{Type: gosnmp.OctetString, Value: []byte(r.Name)}
		}
		if why := f.Refusal(v); why != "" {
			return why
		}
	}
	return ""
}

// chooseAlternatives sets the alternatives of each row: per column, the
// first alternative if the row answered it at the walk (or the column has
// no other); else it asks the row for the further ones, one alternative
// at a time, in Gets of at most MaxVarbinds, and the row keeps the first
// it answers, or -1. Rows that chose alike share one slice.
func (p *Poller) chooseAlternatives(g *gosnmp.GoSNMP, d *device, t *fleet.Table, wp walkPlan, byCol []map[string]*gosnmp.SnmpPDU, rows []Row) (int, error) {
	nc := len(t.Columns)
	alts := make([]int, len(rows)*nc) // row j's at alts[j*nc:]
	for j := range rows {
		for i, k := range wp.alts {
			if k < 0 {
				continue
			}
			if v := byCol[k][rows[j].Index]; v == nil || snmpvalue.None(v.Type) {
				alts[j*nc+i] = -1 // to be asked for the further alternatives
			}
		}
	}
	requests := 0
	for i, col := range t.Columns {
		for a := 1; a < len(col.Alternatives); a++ {
			var ask []int
			for j := range rows {
				if alts[j*nc+i] == -1 {
					ask = append(ask, j)
				}
			}
			for lo := 0; lo < len(ask); lo += p.opts.MaxVarbinds {
				batch := ask[lo:min(lo+p.opts.MaxVarbinds, len(ask))]
				oids := make([]string, len(batch))
				for k, j := range batch {
					oids[k] = col.Alternatives[a] + "." + rows[j].Index
				}
				pkt, err := g.Get(oids)
				requests++
				if err != nil {
					return requests, fmt.Errorf("get %d alternatives from %s: %w", len(oids), d.t.Address(), err)
				}
				for k := range pkt.Variables {
					v := &pkt.Variables[k]
					if k < len(batch) && sameOID(v.Name, oids[k]) && !snmpvalue.None(v.Type) {
						alts[batch[k]*nc+i] = a
					}
				}
			}
		}
	}
	shareAlternatives(rows, alts)
	return requests, nil
}

// shareAlternatives sets the alternatives of each row from alts (row j's
// at alts[j*nc:], nc per row), one slice for the rows that chose alike:
// most rows of a table choose the same.
func shareAlternatives(rows []Row, alts []int) {
	if len(rows) == 0 {
		return
	}
	nc := len(alts) / len(rows)
	shared := map[string]*[]int{}
	var key []byte
	for j := range rows {
		alt := alts[j*nc : (j+1)*nc]
		key = key[:0]
		for _, a := range alt {
			key = binary.AppendVarint(key, int64(a))
		}
		s, ok := shared[string(key)]
		if !ok {
			c := slices.Clone(alt)
			s = &c
			shared[string(key)] = s
		}
		rows[j].alt = s
	}
}

// column returns the column OID (without the index) r is polled for in
// t's column i: the alternative it chose, or the first if it answered
// none.
func (r *Row) column(t *fleet.Table, i int) string {
	return t.Columns[i].Alternatives[max(r.Alternative()[i], 0)]
}

// nameRows gives each row its key (fleet.RowSegments: the segment of its
// name, of its index if the name is empty, and with the index appended
// for names that other rows of the table have too) and sorts the rows by
// index.
func nameRows(target string, t *fleet.Table, rows []Row) {
	names, indexes := make([]string, len(rows)), make([]string, len(rows))
	for i := range rows {
		names[i], indexes[i] = rows[i].Name, rows[i].Index
	}
	for i, seg := range fleet.RowSegments(names, indexes) {
		rows[i].Key = t.RowKey(target, seg)
	}
	sort.SliceStable(rows, func(i, j int) bool { return compareOID(rows[i].Index, rows[j].Index) < 0 })
}

// Walk discovers the tables of target t once, as a poller with opts
// would, and writes nothing: what `spoold walk` shows. It starts no
// goroutine.
func Walk(ctx context.Context, opts Options, t *fleet.Target) (*Discovery, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	p := &Poller{opts: opts, log: slog.New(slog.DiscardHandler), now: opts.Now}
	if p.now == nil {
		p.now = time.Now
	}
	return p.discover(ctx, newDevice(t, &p.opts))
}

// UsesBulk reports whether a poller with opts polls the rows of td with
// GetBulk walks of its columns (rather than Gets of their cells).
func (o Options) UsesBulk(td *TableDiscovery) bool { return useBulk(td, &o) }
