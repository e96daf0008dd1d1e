package simulate

import (
	"fmt"
	"math"
	"slices"
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
	// ifHCOutUcastPkts answers noSuchObject, and the ifIndexes of the
	// second half (above Interfaces/2 with Contiguous numbering) answer
	// noSuchInstance; walks pass over both.
	Missing bool
	// Wrap makes the counters pass zero WrapAfter after each boot:
	// Counter64 columns wrap at 2^64, Counter32 columns at 2^32.
	Wrap bool
	// RestartEvery reboots the device periodically (0: never): sysUpTime
	// and the counters start again from zero.
	RestartEvery time.Duration
	// NoHC devices have no 64-bit counters: the ifXTable lacks its four
	// ifHC columns (a Get answers noSuchObject, a walk passes over them).
	NoHC bool
	// Renumber devices renumber their interfaces at every restart: the
	// ports move on by one slot of ifIndexes, so the same ifName appears
	// under another ifIndex (Fleet.Interfaces says which).
	Renumber bool
	// Rename devices give their interfaces new names at every restart, as
	// a broken or hostile agent might: ifName and ifDescr get "-r" and the
	// restart count appended (Gi0/1-r3), so each restart shows a new set of
	// instance names.
	Rename bool
}

// Fleet is the simulated devices and the truth of their values. Its methods
// are safe for concurrent use.
type Fleet struct {
	opts Options

	mu        sync.RWMutex
	overrides map[int]Behavior
	restarts  map[int][]time.Time // manual restarts, in order

	shapes sync.Map // shapeKey -> *shape
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
	b.NoHC = spread(i, o.NoHC, 53)
	b.Renumber = spread(i, o.Renumber, 67)
	b.Rename = spread(i, o.Rename, 79)
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
	boot, _ := f.boot(i, t)
	return boot
}

// boot returns when device i last booted before or at t, and how many
// times it restarted since its first boot.
func (f *Fleet) boot(i int, t time.Time) (time.Time, int) {
	boot := f.opts.Epoch.Add(-time.Duration(1+i%30) * 24 * time.Hour)
	first, gen := boot, 0
	if every := f.Behavior(i).RestartEvery; every > 0 && t.After(boot) {
		n := t.Sub(boot) / every
		boot, gen = boot.Add(n*every), int(n)
	}
	f.mu.RLock()
	for _, r := range f.restarts[i] {
		if !r.After(t) && r.After(first) {
			gen++
			if r.After(boot) {
				boot = r
			}
		}
	}
	f.mu.RUnlock()
	return boot, gen
}

// UptimeTicks returns device i's sysUpTime at t in hundredths of a second
// (before the TimeTicks wrap).
func (f *Fleet) UptimeTicks(i int, t time.Time) uint64 {
	return f.reading(i, f.Behavior(i), t).ticks
}

// Value returns what device i answers to a Get of oid at time t. OIDs are
// numeric, with or without a leading dot. Unknown objects are
// noSuchObject; unknown instances of a known one noSuchInstance.
func (f *Fleet) Value(i int, oid string, t time.Time) gosnmp.SnmpPDU {
	return f.reading(i, f.Behavior(i), t).get(parseOID(oid), "."+strings.TrimPrefix(oid, "."))
}

// Walk returns what a walk of device i at time t finds under root ("" for
// the whole view), in lexicographic OID order: the truth a GetNext or
// GetBulk walk must read, if the device does not restart during it.
func (f *Fleet) Walk(i int, root string, t time.Time) []gosnmp.SnmpPDU {
	r := f.reading(i, f.Behavior(i), t)
	prefix := parseOID(root)
	var out []gosnmp.SnmpPDU
	for k := r.sh.next(prefix, false); k < len(r.sh.entries); k++ {
		e := &r.sh.entries[k]
		if !hasPrefix(e.oid, prefix) {
			break
		}
		out = append(out, r.pdu(e.col, e.k, e.name))
	}
	return out
}

func hasPrefix(oid, prefix []uint32) bool {
	return len(oid) >= len(prefix) && slices.Equal(oid[:len(prefix)], prefix)
}

// Interfaces returns the interfaces device i serves at time t, in ifIndex
// order.
func (f *Fleet) Interfaces(i int, t time.Time) []Interface {
	r := f.reading(i, f.Behavior(i), t)
	out := make([]Interface, len(r.sh.slots))
	for s, index := range r.sh.slots {
		p := r.port(s)
		ifc := &r.sh.ports[p]
		adminUp, operUp := f.portStatus(i, p)
		out[s] = Interface{Index: index, Port: p, Name: r.renamed(ifc.name), Descr: r.renamed(ifc.descr), Alias: alias(i, p, !operUp),
			Type: ifc.typ, SpeedMbps: ifc.mbps, AdminUp: adminUp, OperUp: operUp}
	}
	return out
}

// Rate returns the rate per second at which the counter oid (a column
// and instance, as for Value) of device i grows at time t: 0 for the
// counters of an interface that is down. ok is false if oid is not a
// counter the device serves.
func (f *Fleet) Rate(i int, oid string, t time.Time) (perSecond uint64, ok bool) {
	r := f.reading(i, f.Behavior(i), t)
	k := r.sh.find(parseOID(oid))
	if k < 0 {
		return 0, false
	}
	e := &r.sh.entries[k]
	if e.col.typ != gosnmp.Counter32 && e.col.typ != gosnmp.Counter64 {
		return 0, false
	}
	rate, _ := r.rate(e.col, e.k)
	return rate, true
}

// findColumn returns the column with the base oid, or nil.
func findColumn(base string) *column { return columnByOID[base] }
