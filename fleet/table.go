package fleet

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/spoold/spoold/internal/snmpvalue"
	"github.com/spoold/spoold/mib"
	"github.com/spoold/spoold/rrd"
)

// Table is an SNMP table of a profile. Discovery walks its columns (the
// Index, instance, alias and filter columns, and the Columns' first
// alternatives): its rows are the indexes they answer. Each row that
// passes the Filters is its own key (RowKey) and RRD file, whose data
// sources are the Columns. A Table is immutable once built.
type Table struct {
	Name string // unique in the profile: 1 to 64 of [A-Za-z0-9_-]
	// Subdir, if set, puts the rows under a subdirectory of the target's
	// directory: key target/Subdir/segment. At most one table of a profile
	// has none (key target/segment), so no two tables share a key.
	Subdir string
	// Index, if set, is one more column walked at discovery (ifIndex):
	// a row is found by any walked column that answers it, and its index
	// is the OID suffix after the column ("3", "10101", "1.4").
	Index string
	// Instance are the columns that name a row, tried in order (the first
	// non-empty value wins). Empty: the index names the row.
	Instance []string
	// InstanceText is the instance line as written ("ifName", "index").
	InstanceText string
	// Alias, if set, is the column walked at discovery for each row's
	// description ("alias ifAlias"), which the device page shows.
	Alias   string
	Filters []Filter
	Columns []Column
	Line    int // where the table line is, for messages
}

// Column is one data source of each row: its DS (DS.OID is the first
// alternative) and the column OIDs it may be read from, in order of
// preference ("ifHCInOctets|ifInOctets"). Discovery picks, per row, the
// first alternative the row answers; the data source keeps its name.
type Column struct {
	DS
	Alternatives []string // column OIDs without the index; Alternatives[0] == DS.OID
}

// Filter keeps the rows whose column value passes: == and != compare with
// a number (integer values) or a text (strings); =~ and !~ match a regular
// expression (RE2) against the value's text. A row without a value of the
// column does not pass.
type Filter struct {
	Column string // column OID; "" for the row's instance name
	Op     string // "==", "!=", "=~", "!~"
	Value  string
	Text   string // the filter as written, for messages
	num    *int64
	re     *regexp.Regexp
}

// Limits of tables.
const (
	maxTables         = 16
	maxTableColumns   = 256
	maxTableFilters   = 32
	maxInstanceAlts   = 4
	maxColumnAlts     = 4
	maxTableNameLen   = 64
	maxFilterValueLen = 1024
)

// parseInstance parses an instance line's value: "index", or columns
// separated by "|" (ifName, IF-MIB::ifDescr, a numeric OID...).
func parseInstance(s string, resolve func(string) (string, error)) ([]string, error) {
	if s == "index" {
		return nil, nil
	}
	alts := strings.Split(s, "|")
	if len(alts) > maxInstanceAlts {
		return nil, fmt.Errorf("instance %q: more than %d alternatives", printable(s), maxInstanceAlts)
	}
	out := make([]string, len(alts))
	for i, a := range alts {
		oid, err := resolve(a)
		if err != nil {
			return nil, fmt.Errorf("instance: want index, or columns (ifName, ifDescr, ifAlias, ...) separated by |: %w", err)
		}
		out[i] = oid
	}
	return out, nil
}

// parseFilter parses "filter <column|instance> <op> <value>"'s fields. An
// == or != value may be an enumeration label of the column
// (ifOperStatus == up) or a name of an OID-valued one (mib.FilterValue).
func parseFilter(f []string, resolve func(string) (string, error), res *mib.Resolver) (Filter, error) {
	if len(f) != 3 {
		return Filter{}, fmt.Errorf("want \"filter <column|instance> <==|!=|=~|!~> <value>\"")
	}
	flt := Filter{Op: f[1], Value: f[2], Text: strings.Join(f, " ")}
	if len(flt.Value) > maxFilterValueLen {
		return Filter{}, fmt.Errorf("filter value longer than %d bytes", maxFilterValueLen)
	}
	var col *mib.Object
	if f[0] != "instance" {
		oid, err := resolve(f[0])
		if err != nil {
			return Filter{}, fmt.Errorf("filter column: %w", err)
		}
		flt.Column = oid
		if o, suffix := res.ObjectAt(oid); o != nil && suffix == "" {
			col = o
		}
	}
	switch flt.Op {
	case "==", "!=":
		if col != nil {
			v, err := res.FilterValue(col, flt.Value)
			if err != nil {
				return Filter{}, err
			}
			flt.Value = v
		}
		if n, err := strconv.ParseInt(flt.Value, 10, 64); err == nil {
			flt.num = &n
		}
	case "=~", "!~":
		re, err := regexp.Compile(flt.Value)
		if err != nil {
			return Filter{}, fmt.Errorf("filter %q: %w", printable(flt.Value), err)
		}
		flt.re = re
	default:
		return Filter{}, fmt.Errorf("filter operator %q: want ==, !=, =~ or !~", printable(flt.Op))
	}
	return flt, nil
}

// Pass reports whether a row whose filter column has the value v (nil: the
// row has none) passes the filter.
func (f *Filter) Pass(v *gosnmp.SnmpPDU) bool {
	if v == nil || snmpvalue.None(v.Type) {
		return false
	}
	var eq bool
	switch f.Op {
	case "=~", "!~":
		return f.re.MatchString(snmpvalue.Text(v)) == (f.Op == "=~")
	}
	if f.num != nil {
		n, ok := snmpvalue.Int(v)
		eq = ok && n == *f.num
	} else {
		eq = snmpvalue.Text(v) == f.Value
	}
	return eq == (f.Op == "==")
}

// Refusal returns why a row whose filter column has the value v (nil: the
// row has none) fails the filter, or "" if it passes.
func (f *Filter) Refusal(v *gosnmp.SnmpPDU) string {
	switch {
	case f.Pass(v):
		return ""
	case v == nil || snmpvalue.None(v.Type):
		return fmt.Sprintf("filter %q: the row has no value", f.Text)
	}
	return fmt.Sprintf("filter %q: value %q", f.Text, printable(snmpvalue.Text(v)))
}

// validTableName reports whether s may name a table or a subdirectory:
// 1 to 64 of [A-Za-z0-9_-].
func validTableName(s string) bool {
	if s == "" || len(s) > maxTableNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// RowKey returns the key of the row of t with segment, a row of target:
// target/segment, or target/Subdir/segment.
func (t *Table) RowKey(target, segment string) string {
	return RowKey(target, t.keyRest(segment))
}

// keyRest is what a row key of t holds after "target/": the segment, or
// Subdir/segment.
func (t *Table) keyRest(segment string) string {
	if t.Subdir == "" {
		return segment
	}
	return t.Subdir + "/" + segment
}

// TableOf returns the table whose rows have keys target + "/" + rest.
func (p *Profile) TableOf(rest string) (*Table, bool) {
	sub, _, nested := strings.Cut(rest, "/")
	if !nested {
		sub = ""
	}
	for _, t := range p.Tables {
		if t.Subdir == sub {
			return t, true
		}
	}
	return nil, false
}

// KeyDS returns the data sources of a key of target t: its scalars for the
// target's own key, its table's columns for a row key; false for a key
// that is not t's.
func (t *Target) KeyDS(key string) ([]DS, bool) {
	name, rest := SplitKey(key)
	if name != t.Name {
		return nil, false
	}
	if rest == "" {
		return t.Profile.DS, len(t.Profile.DS) > 0
	}
	tb, ok := t.Profile.TableOf(rest)
	if !ok {
		return nil, false
	}
	ds := make([]DS, len(tb.Columns))
	for i, c := range tb.Columns {
		ds[i] = c.DS
	}
	return ds, true
}

// RRDLayout returns the RRD layout of a key of target t (KeyDS): one
// data source per value, with a heartbeat of two steps, and the
// profile's RRAs, or by default those of step.
func (t *Target) RRDLayout(key string, step time.Duration) (rrd.Layout, bool) {
	dss, ok := t.KeyDS(key)
	if !ok {
		return rrd.Layout{}, false
	}
	l := rrd.Layout{Step: step, RRAs: t.Profile.RRAs, DS: make([]rrd.DataSource, 0, len(dss))}
	if len(l.RRAs) == 0 {
		l.RRAs = rrd.DefaultRRAs(step)
	}
	for _, ds := range dss {
		d := ds.DataSource
		d.Heartbeat = 2 * step
		l.DS = append(l.DS, d)
	}
	return l, true
}
