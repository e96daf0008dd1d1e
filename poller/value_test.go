package poller

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/spool"
)

func TestMapValue(t *testing.T) {
	counter := &fleet.DS{DataSource: rrd.DataSource{Name: "c", Type: rrd.Counter}}
	gauge := &fleet.DS{DataSource: rrd.DataSource{Name: "g", Type: rrd.Gauge}}
	for _, tc := range []struct {
		ds   *fleet.DS
		pdu  gosnmp.SnmpPDU
		want spool.Value
	}{
		{counter, gosnmp.SnmpPDU{Type: gosnmp.Counter32, Value: uint(4294967295)}, spool.Value{Type: spool.Counter, Counter: 4294967295}},
		{counter, gosnmp.SnmpPDU{Type: gosnmp.Counter64, Value: uint64(math.MaxUint64)}, spool.Value{Type: spool.Counter, Counter: math.MaxUint64}},
		{counter, gosnmp.SnmpPDU{Type: gosnmp.Gauge32, Value: uint(7)}, spool.Value{Type: spool.Counter, Counter: 7}},
		{counter, gosnmp.SnmpPDU{Type: gosnmp.TimeTicks, Value: uint32(100)}, spool.Value{Type: spool.Counter, Counter: 100}},
		{counter, gosnmp.SnmpPDU{Type: gosnmp.Integer, Value: 5}, spool.Value{Type: spool.Counter, Counter: 5}},
		{counter, gosnmp.SnmpPDU{Type: gosnmp.Integer, Value: -5}, spool.Value{}},
		{counter, gosnmp.SnmpPDU{Type: gosnmp.OctetString, Value: []byte("123")}, spool.Value{Type: spool.Counter, Counter: 123}},
		{counter, gosnmp.SnmpPDU{Type: gosnmp.OctetString, Value: []byte("1.5")}, spool.Value{}},
		{counter, gosnmp.SnmpPDU{Type: gosnmp.OpaqueFloat, Value: float32(1.5)}, spool.Value{}},
		{counter, gosnmp.SnmpPDU{Type: gosnmp.NoSuchObject}, spool.Value{}},
		{counter, gosnmp.SnmpPDU{Type: gosnmp.NoSuchInstance}, spool.Value{}},
		{counter, gosnmp.SnmpPDU{Type: gosnmp.EndOfMibView}, spool.Value{}},
		{counter, gosnmp.SnmpPDU{Type: gosnmp.Null}, spool.Value{}},
		{gauge, gosnmp.SnmpPDU{Type: gosnmp.Gauge32, Value: uint(1000)}, spool.Value{Type: spool.Gauge, Gauge: 1000}},
		{gauge, gosnmp.SnmpPDU{Type: gosnmp.Counter64, Value: uint64(1 << 53)}, spool.Value{Type: spool.Gauge, Gauge: 1 << 53}},
		{gauge, gosnmp.SnmpPDU{Type: gosnmp.Integer, Value: -40}, spool.Value{Type: spool.Gauge, Gauge: -40}},
		{gauge, gosnmp.SnmpPDU{Type: gosnmp.TimeTicks, Value: uint32(360000)}, spool.Value{Type: spool.Gauge, Gauge: 360000}},
		{gauge, gosnmp.SnmpPDU{Type: gosnmp.OctetString, Value: []byte(" 0.15 ")}, spool.Value{Type: spool.Gauge, Gauge: 0.15}},
		{gauge, gosnmp.SnmpPDU{Type: gosnmp.OctetString, Value: []byte("NaN")}, spool.Value{}},
		{gauge, gosnmp.SnmpPDU{Type: gosnmp.OctetString, Value: []byte("up")}, spool.Value{}},
		{gauge, gosnmp.SnmpPDU{Type: gosnmp.OpaqueDouble, Value: 2.5}, spool.Value{Type: spool.Gauge, Gauge: 2.5}},
		{gauge, gosnmp.SnmpPDU{Type: gosnmp.OpaqueDouble, Value: math.Inf(1)}, spool.Value{}},
		{gauge, gosnmp.SnmpPDU{Type: gosnmp.IPAddress, Value: "10.0.0.1"}, spool.Value{}},
		{gauge, gosnmp.SnmpPDU{Type: gosnmp.ObjectIdentifier, Value: ".1.3.6"}, spool.Value{}},
	} {
		t.Run(fmt.Sprintf("%v/%v/%v", tc.ds.Type, tc.pdu.Type, tc.pdu.Value), func(t *testing.T) {
			tc.want.Name = tc.ds.Name
			got, ok := mapValue(tc.ds, &tc.pdu)
			if got != tc.want || ok != (tc.want.Type != spool.Unknown) {
				t.Errorf("got %+v %v, want %+v", got, ok, tc.want)
			}
		})
	}
}

func FuzzMapValue(f *testing.F) {
	// What agents send: snmpd's ifHCInOctets, ifOperStatus, laLoad,
	// sysUpTime, an Opaque float, a negative Integer, noSuchObject.
	for _, seed := range []struct {
		typ  gosnmp.Asn1BER
		text string
		n    uint64
	}{
		{gosnmp.OctetString, "12", 0}, {gosnmp.Counter64, "", 1 << 63}, {gosnmp.Counter32, "", 4294967295},
		{gosnmp.Gauge32, "", 1000000000}, {gosnmp.Integer, "", 1}, {gosnmp.OctetString, "0.15", 0},
		{gosnmp.TimeTicks, "", 8640000}, {gosnmp.OpaqueFloat, "", math.Float64bits(1.5)},
		{gosnmp.Integer, "", uint64(1<<64 - 5)}, {gosnmp.NoSuchObject, "", 0}, {gosnmp.OctetString, " 42 ", 0},
	} {
		f.Add(byte(seed.typ), seed.text, seed.n)
	}
	f.Fuzz(func(t *testing.T, typ byte, text string, n uint64) {
		pdus := []gosnmp.SnmpPDU{
			{Type: gosnmp.Asn1BER(typ), Value: []byte(text)},
			{Type: gosnmp.Asn1BER(typ), Value: n},
			{Type: gosnmp.Asn1BER(typ), Value: int(n)},
			{Type: gosnmp.Asn1BER(typ), Value: math.Float64frombits(n)},
		}
		for _, ds := range []*fleet.DS{{DataSource: rrd.DataSource{Name: "c", Type: rrd.Counter}}, {DataSource: rrd.DataSource{Name: "g", Type: rrd.Gauge}}} {
			for i := range pdus {
				v, ok := mapValue(ds, &pdus[i])
				e := spool.Entry{Key: "k", Values: []spool.Value{v}}
				if ok == (v.Type == spool.Unknown) || e.Validate() != nil || (v.Type == spool.Gauge && (math.IsNaN(v.Gauge) || math.IsInf(v.Gauge, 0))) {
					t.Fatalf("%v %+v: %+v %v", ds.Type, pdus[i], v, ok)
				}
				if ds.Type.Integral() && v.Type == spool.Gauge || !ds.Type.Integral() && v.Type == spool.Counter {
					t.Fatalf("%v got %v", ds.Type, v.Type)
				}
			}
		}
	})
}

func TestRestarted(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const iv = 5 * time.Minute
	ticks := func(d time.Duration) uint32 { return uint32(d / (10 * time.Millisecond)) }
	for _, tc := range []struct {
		name    string
		prev    uint32 // 0 with first: no earlier poll
		first   bool
		up      uint32
		elapsed time.Duration
		want    bool
	}{
		{"first poll, up for days", 0, true, ticks(72 * time.Hour), 0, false},
		{"first poll, up for a minute", 0, true, ticks(time.Minute), 0, true},
		{"steady", ticks(time.Hour), false, ticks(time.Hour + iv), iv, false},
		{"went back", ticks(time.Hour), false, ticks(2 * time.Minute), iv, true},
		{"restarted young agent", ticks(time.Minute), false, ticks(2 * time.Minute), iv, true},
		{"TimeTicks wrap", math.MaxUint32 - ticks(time.Minute), false, ticks(4 * time.Minute), iv, false},
		{"restart near the wrap", math.MaxUint32 - ticks(time.Minute), false, ticks(100 * time.Minute), iv, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &device{}
			if !tc.first {
				d.lastUptime, d.lastAt, d.hasUptime = tc.prev, t0, true
			}
			if got := d.restarted(tc.up, t0.Add(tc.elapsed), iv); got != tc.want {
				t.Errorf("restarted = %v", got)
			}
		})
	}
}

func TestBackoffSkips(t *testing.T) {
	for _, tc := range []struct{ n, after, max, want int }{
		{0, 2, 6, 0}, {1, 2, 6, 0}, {2, 2, 6, 1}, {3, 2, 6, 2}, {4, 2, 6, 4}, {5, 2, 6, 6}, {100, 2, 6, 6}, {1, 1, 1, 1},
	} {
		t.Run(fmt.Sprintf("n%d/after%d/max%d", tc.n, tc.after, tc.max), func(t *testing.T) {
			if got := backoffSkips(tc.n, tc.after, tc.max); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
		})
	}
}
