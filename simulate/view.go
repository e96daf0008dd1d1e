package simulate

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/gosnmp/gosnmp"
)

// shapeKey is what decides which OIDs a device serves: its layout, and
// the behaviors that remove columns or rows. Renumbering does not change
// the set of ifIndexes, only which interface is in which slot.
type shapeKey struct {
	layout        *layout
	missing, noHC bool
}

// shape is the MIB view of every device with one shapeKey: all the
// instances it serves in lexicographic OID order, built once and shared.
type shape struct {
	entries []entry
	ports   []iface // the layout's interfaces, by port
	slots   []int   // ifIndex of each slot served
	cols    map[*column]bool
}

// entry is one instance of the view.
type entry struct {
	oid  []uint32
	name string // ".1.3.6..."
	col  *column
	k    int // slot for interface columns, else the instance number
}

// shapeOf returns device i's shape with behavior b, building it at first
// use.
func (f *Fleet) shapeOf(i int, b Behavior) *shape {
	key := shapeKey{layout: f.layoutOf(i), missing: b.Missing, noHC: b.NoHC}
	if sh, ok := f.shapes.Load(key); ok {
		return sh.(*shape)
	}
	sh, _ := f.shapes.LoadOrStore(key, buildShape(key, f.opts.Interfaces))
	return sh.(*shape)
}

func buildShape(key shapeKey, n int) *shape {
	sh := &shape{ports: make([]iface, n), cols: map[*column]bool{}}
	for p := range n {
		sh.ports[p] = key.layout.port(p)
	}
	served := n
	if key.missing {
		served = n / 2
	}
	for s := range served {
		sh.slots = append(sh.slots, sh.ports[s].index)
	}
	for ci := range columns {
		c := &columns[ci]
		if (key.noHC && c.hc) || (key.missing && c.oid == oidIfHCOutUcastPkts) {
			continue
		}
		sh.cols[c] = true
		base := parseOID(c.oid)
		if c.rows == ifRows {
			for s, index := range sh.slots {
				sh.entries = append(sh.entries, newEntry(c, base, s, index))
			}
			continue
		}
		for _, k := range c.instances() {
			sh.entries = append(sh.entries, newEntry(c, base, k, k))
		}
	}
	slices.SortFunc(sh.entries, func(a, b entry) int { return slices.Compare(a.oid, b.oid) })
	return sh
}

func newEntry(c *column, base []uint32, k, inst int) entry {
	oid := append(slices.Clip(base), uint32(inst))
	return entry{oid: oid, name: "." + c.oid + "." + strconv.Itoa(inst), col: c, k: k}
}

// parseOID reads a numeric OID, with or without its leading dot. A part
// that is not a number ends it; a number beyond 2^32-1 is 2^32-1, which
// keeps the order of the OIDs a fuzzer or a broken manager sends.
func parseOID(s string) []uint32 {
	return appendOID(nil, s)
}

func appendOID(dst []uint32, s string) []uint32 {
	s = strings.TrimPrefix(s, ".")
	for s != "" {
		part, rest, _ := strings.Cut(s, ".")
		s = rest
		v, err := strconv.ParseUint(part, 10, 32)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
				break
			}
			v = math.MaxUint32
		}
		dst = append(dst, uint32(v))
	}
	return dst
}

// find returns the entry oid names, or -1.
func (sh *shape) find(oid []uint32) int {
	k, ok := slices.BinarySearchFunc(sh.entries, oid, func(e entry, o []uint32) int { return slices.Compare(e.oid, o) })
	if !ok {
		return -1
	}
	return k
}

// next returns the first entry after oid, or len(entries) at the end of
// the view; v1 skips Counter64 objects, which SNMPv1 cannot carry (RFC
// 3584 4.2.2.1).
func (sh *shape) next(oid []uint32, v1 bool) int {
	k, ok := slices.BinarySearchFunc(sh.entries, oid, func(e entry, o []uint32) int { return slices.Compare(e.oid, o) })
	if ok {
		k++
	}
	for v1 && k < len(sh.entries) && sh.entries[k].col.typ == gosnmp.Counter64 {
		k++
	}
	return k
}

// columnOf returns the column of the MIB whose instance oid would be, or
// nil.
func columnOf(oid []uint32) *column {
	if len(oid) < 2 {
		return nil
	}
	return columnByOID[oidKey(oid[:len(oid)-1])]
}

func oidKey(oid []uint32) string {
	var b strings.Builder
	for k, v := range oid {
		if k > 0 {
			b.WriteByte('.')
		}
		b.WriteString(strconv.FormatUint(uint64(v), 10))
	}
	return b.String()
}

var columnByOID = func() map[string]*column {
	m := make(map[string]*column, len(columns))
	for i := range columns {
		m[columns[i].oid] = &columns[i]
	}
	return m
}()

// get returns the varbind a Get of oid (named name) answers: the value,
// noSuchInstance for an instance the device lacks of an object it has,
// noSuchObject otherwise.
func (r *reading) get(oid []uint32, name string) gosnmp.SnmpPDU {
	if k := r.sh.find(oid); k >= 0 {
		e := &r.sh.entries[k]
		return r.pdu(e.col, e.k, name)
	}
	if c := columnOf(oid); c != nil && r.sh.cols[c] {
		return gosnmp.SnmpPDU{Name: name, Type: gosnmp.NoSuchInstance}
	}
	return gosnmp.SnmpPDU{Name: name, Type: gosnmp.NoSuchObject}
}

// at returns the varbind of entry k, or endOfMibView named name past the
// end.
func (r *reading) at(k int, name string) gosnmp.SnmpPDU {
	if k >= len(r.sh.entries) {
		return gosnmp.SnmpPDU{Name: name, Type: gosnmp.EndOfMibView}
	}
	e := &r.sh.entries[k]
	return r.pdu(e.col, e.k, e.name)
}
