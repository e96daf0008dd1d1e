package simulate

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/gosnmp/gosnmp"
)

// rows is what a column's instances are.
type rows int

const (
	scalar   rows = iota // .0
	ifRows               // one per interface: .ifIndex
	laRows               // UCD laTable: .1 .2 .3
	hrStores             // hrStorageTable: .hrStorageIndex
	hrCPUs               // hrProcessorTable: .hrDeviceIndex
)

// column is one object of the simulated MIB.
type column struct {
	oid  string // without the instance
	typ  gosnmp.Asn1BER
	rows rows
	// Counters: id seeds the per-device rates and starting values, rate is
	// the largest rate per second. A 32-bit column shares the id of its HC
	// column, so it is the low 32 bits of it, as on real gear.
	id, rate uint64
	hc       bool // absent on devices without HC counters (Behavior.NoHC)
	// value returns a non-counter column's value for instance k (a slot
	// for ifRows, else the instance number).
	value func(r *reading, k int) any
}

// reading is one device at one time: what every value of a response is
// computed from.
type reading struct {
	f     *Fleet
	i     int
	b     Behavior
	t     time.Time
	ticks uint64 // sysUpTime
	gen   int    // restarts since the first boot
	sh    *shape
}

func (f *Fleet) reading(i int, b Behavior, t time.Time) *reading {
	boot, gen := f.boot(i, t)
	r := &reading{f: f, i: i, b: b, t: t, gen: gen, sh: f.shapeOf(i, b)}
	if d := t.Sub(boot); d > 0 {
		r.ticks = uint64(d / (10 * time.Millisecond))
	}
	return r
}

// port returns the port in slot s: the slot's own, unless the device
// renumbers, which shifts its ports by one slot at each restart.
func (r *reading) port(s int) int {
	n := len(r.sh.ports)
	if !r.b.Renumber || n == 0 {
		return s
	}
	return (s + n - r.gen%n) % n
}

func (r *reading) iface(s int) *iface { return &r.sh.ports[r.port(s)] }

// renamed returns an interface's name or description as the device gives
// it: with the restart count appended if it renames at restarts.
func (r *reading) renamed(name string) string {
	if !r.b.Rename || r.gen == 0 {
		return name
	}
	return name + "-r" + strconv.Itoa(r.gen)
}

func (r *reading) up(s int) (adminUp, operUp bool) { return r.f.portStatus(r.i, r.port(s)) }

func ifStatus(up bool) int {
	if up {
		return 1
	}
	return 2
}

const (
	memTotal       = 8 << 20 // kB
	ticksPerSecond = 100
	oidSysUpTime   = "1.3.6.1.2.1.1.3"
)

func constant(v any) func(*reading, int) any { return func(*reading, int) any { return v } }

func minute(t time.Time) int { return int(t.Unix() / 60 % 1440) }

func loadInt(r *reading, k int) any { return (r.i*7 + k*13 + minute(r.t)) % 400 }

// The simulated MIB. Counter rates are per second, chosen per device and
// instance in [rate/100, rate].
var columns = []column{
	{oid: "1.3.6.1.2.1.1.1", typ: gosnmp.OctetString, value: func(r *reading, _ int) any { return r.f.layoutOf(r.i).sysDescr }},           // sysDescr
	{oid: "1.3.6.1.2.1.1.2", typ: gosnmp.ObjectIdentifier, value: func(r *reading, _ int) any { return r.f.layoutOf(r.i).sysObjectID }},   // sysObjectID
	{oid: oidSysUpTime, typ: gosnmp.TimeTicks, value: func(r *reading, _ int) any { return uint32(r.ticks) }},                             // sysUpTime
	{oid: "1.3.6.1.2.1.1.4", typ: gosnmp.OctetString, value: constant("noc@example.net")},                                                 // sysContact
	{oid: "1.3.6.1.2.1.1.5", typ: gosnmp.OctetString, value: func(r *reading, _ int) any { return r.f.Name(r.i) }},                        // sysName
	{oid: "1.3.6.1.2.1.1.6", typ: gosnmp.OctetString, value: func(r *reading, _ int) any { return fmt.Sprintf("dc1, row %d", r.i%40+1) }}, // sysLocation
	{oid: "1.3.6.1.2.1.1.7", typ: gosnmp.Integer, value: constant(6)},                                                                     // sysServices
	{oid: "1.3.6.1.2.1.2.1", typ: gosnmp.Integer, value: func(r *reading, _ int) any { return len(r.sh.slots) }},                          // ifNumber

	// IF-MIB ifTable
	{oid: "1.3.6.1.2.1.2.2.1.1", typ: gosnmp.Integer, rows: ifRows, value: func(r *reading, s int) any { return r.sh.slots[s] }}, // ifIndex
	{oid: "1.3.6.1.2.1.2.2.1.2", typ: gosnmp.OctetString, rows: ifRows, value: func(r *reading, s int) any { return r.renamed(r.iface(s).descr) }},
	{oid: "1.3.6.1.2.1.2.2.1.3", typ: gosnmp.Integer, rows: ifRows, value: func(r *reading, s int) any { return r.iface(s).typ }},
	{oid: "1.3.6.1.2.1.2.2.1.4", typ: gosnmp.Integer, rows: ifRows, value: func(r *reading, s int) any { return r.iface(s).mtu }},
	{oid: "1.3.6.1.2.1.2.2.1.5", typ: gosnmp.Gauge32, rows: ifRows, value: func(r *reading, s int) any { return uint(min(r.iface(s).mbps*1e6, math.MaxUint32)) }}, // ifSpeed
	{oid: "1.3.6.1.2.1.2.2.1.6", typ: gosnmp.OctetString, rows: ifRows, value: func(r *reading, s int) any { // ifPhysAddress
		p := r.port(s)
		return []byte{0x02, 0x5d, byte(r.i >> 16), byte(r.i >> 8), byte(r.i), byte(p)}
	}},
	{oid: "1.3.6.1.2.1.2.2.1.7", typ: gosnmp.Integer, rows: ifRows, value: func(r *reading, s int) any { a, _ := r.up(s); return ifStatus(a) }}, // ifAdminStatus
	{oid: "1.3.6.1.2.1.2.2.1.8", typ: gosnmp.Integer, rows: ifRows, value: func(r *reading, s int) any { _, o := r.up(s); return ifStatus(o) }}, // ifOperStatus
	{oid: "1.3.6.1.2.1.2.2.1.10", typ: gosnmp.Counter32, rows: ifRows, id: 1, rate: 12_500_000},                                                 // ifInOctets
	{oid: "1.3.6.1.2.1.2.2.1.11", typ: gosnmp.Counter32, rows: ifRows, id: 2, rate: 20_000},                                                     // ifInUcastPkts
	{oid: "1.3.6.1.2.1.2.2.1.13", typ: gosnmp.Counter32, rows: ifRows, id: 9, rate: 10},                                                         // ifInDiscards
	{oid: "1.3.6.1.2.1.2.2.1.14", typ: gosnmp.Counter32, rows: ifRows, id: 7, rate: 10},                                                         // ifInErrors
	{oid: "1.3.6.1.2.1.2.2.1.16", typ: gosnmp.Counter32, rows: ifRows, id: 3, rate: 12_500_000},                                                 // ifOutOctets
	{oid: "1.3.6.1.2.1.2.2.1.17", typ: gosnmp.Counter32, rows: ifRows, id: 4, rate: 20_000},                                                     // ifOutUcastPkts
	{oid: "1.3.6.1.2.1.2.2.1.19", typ: gosnmp.Counter32, rows: ifRows, id: 10, rate: 10},                                                        // ifOutDiscards
	{oid: "1.3.6.1.2.1.2.2.1.20", typ: gosnmp.Counter32, rows: ifRows, id: 8, rate: 10},                                                         // ifOutErrors

	// IF-MIB ifXTable
	{oid: "1.3.6.1.2.1.31.1.1.1.1", typ: gosnmp.OctetString, rows: ifRows, value: func(r *reading, s int) any { return r.renamed(r.iface(s).name) }}, // ifName
	{oid: "1.3.6.1.2.1.31.1.1.1.6", typ: gosnmp.Counter64, rows: ifRows, id: 1, rate: 12_500_000, hc: true},                                          // ifHCInOctets
	{oid: "1.3.6.1.2.1.31.1.1.1.7", typ: gosnmp.Counter64, rows: ifRows, id: 2, rate: 20_000, hc: true},                                              // ifHCInUcastPkts
	{oid: "1.3.6.1.2.1.31.1.1.1.10", typ: gosnmp.Counter64, rows: ifRows, id: 3, rate: 12_500_000, hc: true},                                         // ifHCOutOctets
	{oid: oidIfHCOutUcastPkts, typ: gosnmp.Counter64, rows: ifRows, id: 4, rate: 20_000, hc: true},                                                   // ifHCOutUcastPkts
	{oid: "1.3.6.1.2.1.31.1.1.1.15", typ: gosnmp.Gauge32, rows: ifRows, value: func(r *reading, s int) any { return uint(r.iface(s).mbps) }},         // ifHighSpeed
	{oid: "1.3.6.1.2.1.31.1.1.1.18", typ: gosnmp.OctetString, rows: ifRows, value: func(r *reading, s int) any { // ifAlias
		_, o := r.up(s)
		return alias(r.i, r.port(s), !o)
	}},

	// HOST-RESOURCES-MIB
	{oid: "1.3.6.1.2.1.25.1.5", typ: gosnmp.Gauge32, value: func(r *reading, _ int) any { return uint(r.i % 5) }},                     // hrSystemNumUsers
	{oid: "1.3.6.1.2.1.25.1.6", typ: gosnmp.Gauge32, value: func(r *reading, _ int) any { return uint(100 + (r.i+minute(r.t))%400) }}, // hrSystemProcesses
	{oid: "1.3.6.1.2.1.25.2.3.1.1", typ: gosnmp.Integer, rows: hrStores, value: func(_ *reading, k int) any { return k }},             // hrStorageIndex
	{oid: "1.3.6.1.2.1.25.2.3.1.2", typ: gosnmp.ObjectIdentifier, rows: hrStores, value: func(_ *reading, k int) any { return storageOf(k).typ }},
	{oid: "1.3.6.1.2.1.25.2.3.1.3", typ: gosnmp.OctetString, rows: hrStores, value: func(_ *reading, k int) any { return storageOf(k).descr }},
	{oid: "1.3.6.1.2.1.25.2.3.1.4", typ: gosnmp.Integer, rows: hrStores, value: func(_ *reading, k int) any { return storageOf(k).unit }},
	{oid: "1.3.6.1.2.1.25.2.3.1.5", typ: gosnmp.Integer, rows: hrStores, value: func(_ *reading, k int) any { return storageOf(k).size }},
	{oid: "1.3.6.1.2.1.25.2.3.1.6", typ: gosnmp.Integer, rows: hrStores, value: storageUsed},
	{oid: "1.3.6.1.2.1.25.3.3.1.1", typ: gosnmp.ObjectIdentifier, rows: hrCPUs, value: constant(".0.0")}, // hrProcessorFrwID
	{oid: "1.3.6.1.2.1.25.3.3.1.2", typ: gosnmp.Integer, rows: hrCPUs, value: func(r *reading, k int) any { // hrProcessorLoad
		return (r.i*3 + k + minute(r.t)*7) % 101
	}},

	// UCD-SNMP-MIB
	{oid: "1.3.6.1.4.1.2021.4.5", typ: gosnmp.Integer, value: constant(memTotal)},                                                                  // memTotalReal
	{oid: "1.3.6.1.4.1.2021.4.6", typ: gosnmp.Integer, value: func(r *reading, _ int) any { return memTotal/2 + (r.i*31+minute(r.t)*17)%100_000 }}, // memAvailReal
	{oid: "1.3.6.1.4.1.2021.4.14", typ: gosnmp.Integer, value: constant(memTotal / 16)},                                                            // memBuffer
	{oid: "1.3.6.1.4.1.2021.4.15", typ: gosnmp.Integer, value: constant(memTotal / 4)},                                                             // memCached
	{oid: "1.3.6.1.4.1.2021.10.1.1", typ: gosnmp.Integer, rows: laRows, value: func(_ *reading, k int) any { return k }},                           // laIndex
	{oid: "1.3.6.1.4.1.2021.10.1.2", typ: gosnmp.OctetString, rows: laRows, value: func(_ *reading, k int) any { return laNames[k-1] }},            // laNames
	{oid: "1.3.6.1.4.1.2021.10.1.3", typ: gosnmp.OctetString, rows: laRows, value: func(r *reading, k int) any { // laLoad
		return strconv.FormatFloat(float64(loadInt(r, k).(int))/100, 'f', 2, 64)
	}},
	{oid: "1.3.6.1.4.1.2021.10.1.5", typ: gosnmp.Integer, rows: laRows, value: loadInt}, // laLoadInt
	{oid: "1.3.6.1.4.1.2021.11.50", typ: gosnmp.Counter32, id: 20, rate: 100},           // ssCpuRawUser
	{oid: "1.3.6.1.4.1.2021.11.52", typ: gosnmp.Counter32, id: 21, rate: 50},            // ssCpuRawSystem
	{oid: "1.3.6.1.4.1.2021.11.53", typ: gosnmp.Counter32, id: 22, rate: 200},           // ssCpuRawIdle
}

const oidIfHCOutUcastPkts = "1.3.6.1.2.1.31.1.1.1.11"

var laNames = [...]string{"Load-1", "Load-5", "Load-15"}

// storage is one row of hrStorageTable, as net-snmp numbers them.
type storage struct {
	index       int
	typ, descr  string
	unit, size  int
	usedPercent int
}

var storages = [...]storage{
	{1, ".1.3.6.1.2.1.25.2.1.2", "Physical memory", 1024, memTotal, 60},
	{3, ".1.3.6.1.2.1.25.2.1.3", "Virtual memory", 1024, memTotal * 3 / 2, 45},
	{6, ".1.3.6.1.2.1.25.2.1.1", "Memory buffers", 1024, memTotal, 6},
	{7, ".1.3.6.1.2.1.25.2.1.1", "Cached memory", 1024, memTotal, 25},
	{31, ".1.3.6.1.2.1.25.2.1.4", "/", 4096, 25_000_000, 40},
	{36, ".1.3.6.1.2.1.25.2.1.4", "/var", 4096, 50_000_000, 70},
}

// cpus are the hrDeviceIndex values of hrProcessorTable's rows.
var cpus = [...]int{196608, 196609}

func storageOf(k int) *storage {
	for j := range storages {
		if storages[j].index == k {
			return &storages[j]
		}
	}
	panic(fmt.Sprintf("simulate: no storage %d", k)) // the view serves only the rows of storages
}

// storageUsed grows through the day and varies by device.
func storageUsed(r *reading, k int) any {
	s := storageOf(k)
	pct := s.usedPercent + (r.i+minute(r.t)/60)%10
	return s.size / 100 * pct
}

// instances returns the instance numbers of a column with rows other than
// ifRows.
func (c *column) instances() []int {
	switch c.rows {
	case laRows:
		return []int{1, 2, 3}
	case hrStores:
		out := make([]int, len(storages))
		for j, s := range storages {
			out[j] = s.index
		}
		return out
	case hrCPUs:
		return cpus[:]
	}
	return []int{0}
}

// Rate returns the per-second rate of a counter column of device i,
// instance k (a port+1 for interface columns).
func (c *column) Rate(i, k int) uint64 {
	h := mix(uint64(i)<<32 ^ uint64(k)<<8 ^ c.id)
	lo := max(c.rate/100, 1)
	return lo + h%(c.rate-lo+1)
}

func mix(x uint64) uint64 { // splitmix64's finalizer
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// counter returns counter column c's value in slot or instance k.
func (r *reading) counter(c *column, k int) uint64 {
	rate, seed := r.rate(c, k)
	v := rate * r.ticks / ticksPerSecond
	if r.b.Wrap {
		v -= rate * uint64(r.f.opts.WrapAfter/time.Second) // passes zero WrapAfter after boot
	} else {
		v += mix(uint64(r.i)^c.id<<40^uint64(seed)) % (1 << 30)
	}
	if c.typ == gosnmp.Counter32 {
		v &= math.MaxUint32
	}
	return v
}

// rate returns counter column c's rate in slot or instance k, and the
// instance number that seeds it: port+1 for interfaces, whose counters
// stay flat while they are not oper up.
func (r *reading) rate(c *column, k int) (rate uint64, seed int) {
	if c.rows != ifRows {
		return c.Rate(r.i, k), k
	}
	p := r.port(k)
	if _, up := r.f.portStatus(r.i, p); !up {
		return 0, p + 1
	}
	return c.Rate(r.i, p+1), p + 1
}

// pdu returns column c's varbind in slot or instance k, named name.
func (r *reading) pdu(c *column, k int, name string) gosnmp.SnmpPDU {
	pdu := gosnmp.SnmpPDU{Name: name, Type: c.typ}
	switch {
	case c.typ == gosnmp.Counter64:
		pdu.Value = r.counter(c, k)
	case c.typ == gosnmp.Counter32:
		pdu.Value = uint(r.counter(c, k))
	case c.typ == gosnmp.OctetString:
		switch v := c.value(r, k).(type) {
		case string:
			pdu.Value = []byte(v) // as a decoded response carries it
		default:
			pdu.Value = v
		}
	default:
		pdu.Value = c.value(r, k)
	}
	return pdu
}
