package simulate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gosnmp/gosnmp"
)

// Behavior is how one device misbehaves.
type Behavior struct {
	// Dead devices never answer.
	Dead bool
	// Delay holds each response back this long (a slow device).
	Delay time.Duration
	// Missing devices lack a column and half their interfaces:
	// ifHCOutUcastPkts answers noSuchObject, and interfaces above
	// Interfaces/2 answer noSuchInstance.
	Missing bool
	// Wrap makes the counters pass zero WrapAfter after each boot:
	// Counter64 columns wrap at 2^64, Counter32 columns at 2^32.
	Wrap bool
	// RestartEvery reboots the device periodically (0: never): sysUpTime
	// and the counters start again from zero.
	RestartEvery time.Duration
}

// Fleet is the simulated devices and the truth of their values. Its methods
// are safe for concurrent use.
type Fleet struct {
	opts Options

	mu        sync.RWMutex
	overrides map[int]Behavior
	restarts  map[int][]time.Time // manual restarts, in order
}

func newFleet(opts Options) *Fleet {
	return &Fleet{opts: opts, overrides: map[int]Behavior{}, restarts: map[int][]time.Time{}}
}

// Len returns the number of devices.
func (f *Fleet) Len() int { return f.opts.Devices }

// Name returns the name (and community) of device i: Prefix and i in at
// least 5 digits, "dev00042".
func (f *Fleet) Name(i int) string { return fmt.Sprintf("%s%05d", f.opts.Prefix, i) }

// Index returns the device a community selects.
func (f *Fleet) Index(community string) (int, bool) {
	rest, ok := strings.CutPrefix(community, f.opts.Prefix)
	if !ok || len(rest) < 5 || len(rest) > 9 {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	if err != nil || i < 0 || i >= f.opts.Devices || f.Name(i) != community {
		return 0, false
	}
	return i, true
}

// Now returns the fleet's clock.
func (f *Fleet) Now() time.Time { return f.opts.Now() }

// spread reports whether device i is one of an evenly spread fraction frac
// of all devices; salt shifts the pattern so that different properties fall
// on different devices.
func spread(i int, frac float64, salt int) bool {
	if frac <= 0 {
		return false
	}
	if frac >= 1 {
		return true
	}
	k := float64(i + salt)
	return math.Floor((k+1)*frac) != math.Floor(k*frac)
}

// Behavior returns device i's behavior: its override if set, else the one
// the fractions of Options give it.
func (f *Fleet) Behavior(i int) Behavior {
	f.mu.RLock()
	b, ok := f.overrides[i]
	f.mu.RUnlock()
	if ok {
		return b
	}
	o := &f.opts
	if spread(i, o.Dead, 0) {
		b.Dead = true
	}
	if spread(i, o.Slow, 7) {
		b.Delay = o.SlowDelay
	}
	b.Missing = spread(i, o.Missing, 13)
	b.Wrap = spread(i, o.Wrap, 29)
	if spread(i, o.Restart, 41) {
		b.RestartEvery = o.RestartEvery
	}
	return b
}

// SetBehavior overrides device i's behavior.
func (f *Fleet) SetBehavior(i int, b Behavior) {
	f.mu.Lock()
	f.overrides[i] = b
	f.mu.Unlock()
}

// Restart reboots device i at time at (usually Now()): from then on its
// uptime and counters start from zero.
func (f *Fleet) Restart(i int, at time.Time) {
	f.mu.Lock()
	f.restarts[i] = append(f.restarts[i], at)
	f.mu.Unlock()
}

// Boot returns when device i last booted before or at t. Devices first
// booted 1 to 30 days before Options.Epoch.
func (f *Fleet) Boot(i int, t time.Time) time.Time {
	boot := f.opts.Epoch.Add(-time.Duration(1+i%30) * 24 * time.Hour)
	if every := f.Behavior(i).RestartEvery; every > 0 && t.After(boot) {
		boot = boot.Add(t.Sub(boot) / every * every)
	}
	f.mu.RLock()
	for _, r := range f.restarts[i] {
		if !r.After(t) && r.After(boot) {
			boot = r
		}
	}
	f.mu.RUnlock()
	return boot
}

// UptimeTicks returns device i's sysUpTime at t in hundredths of a second
// (before the TimeTicks wrap).
func (f *Fleet) UptimeTicks(i int, t time.Time) uint64 {
	d := t.Sub(f.Boot(i, t))
	if d < 0 {
		return 0
	}
	return uint64(d / (10 * time.Millisecond))
}

// column is one object of the simulated MIB.
type column struct {
	oid   string // without the instance
	typ   gosnmp.Asn1BER
	id    uint64 // seeds the per-device rates
	rate  uint64 // counters: the largest rate per second
	table bool   // instances are ifIndex 1..Interfaces; else .0 (or fixed)
	inst  []int  // fixed instances of a scalar-like table (laLoadInt)
	gauge func(i, k int, t time.Time) uint64
}

// The simulated MIB. Counter rates are per second, chosen per device and
// instance in [rate/100, rate].
var columns = []column{
	{oid: "1.3.6.1.2.1.31.1.1.1.6", typ: gosnmp.Counter64, id: 1, rate: 12_500_000, table: true},                                  // ifHCInOctets
	{oid: "1.3.6.1.2.1.31.1.1.1.7", typ: gosnmp.Counter64, id: 2, rate: 20_000, table: true},                                      // ifHCInUcastPkts
	{oid: "1.3.6.1.2.1.31.1.1.1.10", typ: gosnmp.Counter64, id: 3, rate: 12_500_000, table: true},                                 // ifHCOutOctets
	{oid: "1.3.6.1.2.1.31.1.1.1.11", typ: gosnmp.Counter64, id: 4, rate: 20_000, table: true},                                     // ifHCOutUcastPkts
	{oid: "1.3.6.1.2.1.2.2.1.10", typ: gosnmp.Counter32, id: 5, rate: 12_500_000, table: true},                                    // ifInOctets
	{oid: "1.3.6.1.2.1.2.2.1.16", typ: gosnmp.Counter32, id: 6, rate: 12_500_000, table: true},                                    // ifOutOctets
	{oid: "1.3.6.1.2.1.2.2.1.14", typ: gosnmp.Counter32, id: 7, rate: 10, table: true},                                            // ifInErrors
	{oid: "1.3.6.1.2.1.2.2.1.20", typ: gosnmp.Counter32, id: 8, rate: 10, table: true},                                            // ifOutErrors
	{oid: "1.3.6.1.2.1.2.2.1.8", typ: gosnmp.Integer, table: true, gauge: func(i, k int, t time.Time) uint64 { return 1 }},        // ifOperStatus: up
	{oid: "1.3.6.1.2.1.31.1.1.1.15", typ: gosnmp.Gauge32, table: true, gauge: func(i, k int, t time.Time) uint64 { return 1000 }}, // ifHighSpeed
	{oid: "1.3.6.1.4.1.2021.11.50", typ: gosnmp.Counter32, id: 20, rate: 100},                                                     // ssCpuRawUser
	{oid: "1.3.6.1.4.1.2021.11.52", typ: gosnmp.Counter32, id: 21, rate: 50},                                                      // ssCpuRawSystem
	{oid: "1.3.6.1.4.1.2021.11.53", typ: gosnmp.Counter32, id: 22, rate: 200},                                                     // ssCpuRawIdle
	{oid: "1.3.6.1.4.1.2021.10.1.5", typ: gosnmp.Integer, inst: []int{1, 2, 3}, gauge: loadInt},                                   // laLoadInt
	{oid: "1.3.6.1.4.1.2021.4.5", typ: gosnmp.Integer, gauge: func(i, k int, t time.Time) uint64 { return memTotal }},
	{oid: "1.3.6.1.4.1.2021.4.6", typ: gosnmp.Integer, gauge: memAvail},
	{oid: "1.3.6.1.4.1.2021.4.14", typ: gosnmp.Integer, gauge: func(i, k int, t time.Time) uint64 { return memTotal / 16 }},
	{oid: "1.3.6.1.4.1.2021.4.15", typ: gosnmp.Integer, gauge: func(i, k int, t time.Time) uint64 { return memTotal / 4 }},
	{oid: "1.3.6.1.2.1.25.1.6", typ: gosnmp.Gauge32, gauge: func(i, k int, t time.Time) uint64 { return uint64(100 + (i+minute(t))%400) }}, // hrSystemProcesses
	{oid: "1.3.6.1.2.1.25.1.5", typ: gosnmp.Gauge32, gauge: func(i, k int, t time.Time) uint64 { return uint64(i % 5) }},                   // hrSystemNumUsers
}

const (
	memTotal            = 8 << 20 // kB
	oidSysUpTime        = "1.3.6.1.2.1.1.3.0"
	oidSysName          = "1.3.6.1.2.1.1.5.0"
	oidIfHCOutUcastPkts = "1.3.6.1.2.1.31.1.1.1.11"
	ticksPerSecond      = 100
)

func minute(t time.Time) int { return int(t.Unix() / 60 % 1440) }

func loadInt(i, k int, t time.Time) uint64 { return uint64((i*7 + k*13 + minute(t)) % 400) }

func memAvail(i, k int, t time.Time) uint64 {
	return memTotal/2 + uint64((i*31+minute(t)*17)%100_000)
}

// Rate returns the per-second rate of a counter column of device i,
// instance k.
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

// counter returns a counter column's value for device i, instance k, after
// ticks hundredths of a second of uptime.
func (f *Fleet) counter(c *column, i, k int, ticks uint64, wrap bool) uint64 {
	rate := c.Rate(i, k)
	v := rate * ticks / ticksPerSecond
	if wrap {
		v -= rate * uint64(f.opts.WrapAfter/time.Second) // passes zero WrapAfter after boot
	} else {
		v += mix(uint64(i)^c.id<<40^uint64(k)) % (1 << 30)
	}
	if c.typ == gosnmp.Counter32 {
		v &= math.MaxUint32
	}
	return v
}

// Value returns what device i answers for oid at time t: the varbind of a
// Get response. OIDs are numeric, with or without a leading dot. Unknown
// objects are noSuchObject; unknown instances of a known one noSuchInstance.
func (f *Fleet) Value(i int, oid string, t time.Time) gosnmp.SnmpPDU {
	return f.value(i, f.Behavior(i), strings.TrimPrefix(oid, "."), t)
}

func (f *Fleet) value(i int, b Behavior, oid string, t time.Time) gosnmp.SnmpPDU {
	pdu := gosnmp.SnmpPDU{Name: "." + oid, Type: gosnmp.NoSuchObject}
	switch oid {
	case oidSysUpTime:
		pdu.Type, pdu.Value = gosnmp.TimeTicks, uint32(f.UptimeTicks(i, t))
		return pdu
	case oidSysName:
		pdu.Type, pdu.Value = gosnmp.OctetString, []byte(f.Name(i))
		return pdu
	}
	dot := strings.LastIndexByte(oid, '.')
	if dot < 0 {
		return pdu
	}
	base, instStr := oid[:dot], oid[dot+1:]
	c := findColumn(base)
	if c == nil {
		return pdu
	}
	if b.Missing && base == oidIfHCOutUcastPkts {
		return pdu
	}
	pdu.Type = gosnmp.NoSuchInstance
	k, err := strconv.Atoi(instStr)
	if err != nil || strconv.Itoa(k) != instStr || !f.hasInstance(c, k, b) {
		return pdu
	}
	switch c.typ {
	case gosnmp.Counter64:
		pdu.Type, pdu.Value = c.typ, f.counter(c, i, k, f.UptimeTicks(i, t), b.Wrap)
	case gosnmp.Counter32:
		pdu.Type, pdu.Value = c.typ, uint(f.counter(c, i, k, f.UptimeTicks(i, t), b.Wrap))
	case gosnmp.Integer:
		pdu.Type, pdu.Value = c.typ, int(c.gauge(i, k, t))
	default:
		pdu.Type, pdu.Value = c.typ, uint(c.gauge(i, k, t))
	}
	return pdu
}

func (f *Fleet) hasInstance(c *column, k int, b Behavior) bool {
	switch {
	case c.table:
		limit := f.opts.Interfaces
		if b.Missing {
			limit /= 2
		}
		return k >= 1 && k <= limit
	case c.inst != nil:
		for _, x := range c.inst {
			if x == k {
				return true
			}
		}
		return false
	}
	return k == 0
}

func findColumn(base string) *column {
	for i := range columns {
		if columns[i].oid == base {
			return &columns[i]
		}
	}
	return nil
}
