package simulate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
)

const (
	oidIfTable  = "1.3.6.1.2.1.2.2"
	oidIfXTable = "1.3.6.1.2.1.31.1.1"
	oidIfName   = "1.3.6.1.2.1.31.1.1.1.1"
	oidIfHCIn   = "1.3.6.1.2.1.31.1.1.1.6"
	oidIfInOct  = "1.3.6.1.2.1.2.2.1.10"
	oidIfOperSt = "1.3.6.1.2.1.2.2.1.8"
	oidUptime0  = "1.3.6.1.2.1.1.3.0"
)

// gearOptions is a fleet that looks like real gear: vendor numbering, 48
// interfaces, a quarter of them down.
func gearOptions() Options {
	o := testOptions()
	o.Devices = 12
	o.Interfaces = 48
	o.Numbering = Vendor
	o.Down = 0.25
	return o
}

func client(t testing.TB, s *Simulator, version gosnmp.SnmpVersion, community string) *gosnmp.GoSNMP {
	t.Helper()
	g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: uint16(s.Addr().Port), Community: community,
		Version: version, Timeout: 2 * time.Second, Retries: 1, MaxRepetitions: 25}
	if err := g.Connect(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Conn.Close() })
	return g
}

// sameVarbinds reports the first difference between got and want.
func sameVarbinds(got, want []gosnmp.SnmpPDU) error {
	for k := range min(len(got), len(want)) {
		g, w := got[k], want[k]
		if g.Name != w.Name || g.Type != w.Type || fmt.Sprint(g.Value) != fmt.Sprint(w.Value) {
			return fmt.Errorf("varbind %d: got %s %v %v, want %s %v %v", k, g.Name, g.Type, g.Value, w.Name, w.Type, w.Value)
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("%d varbinds, want %d", len(got), len(want))
	}
	return nil
}

// inOrder checks that the names of vs strictly increase in OID order.
func inOrder(t *testing.T, vs []gosnmp.SnmpPDU) {
	t.Helper()
	for k := 1; k < len(vs); k++ {
		if slices.Compare(parseOID(vs[k-1].Name), parseOID(vs[k].Name)) >= 0 {
			t.Fatalf("%s comes after %s", vs[k].Name, vs[k-1].Name)
		}
	}
}

func TestWalksReadTheTruth(t *testing.T) {
	s := serve(t, gearOptions())
	f := s.Fleet()
	now := f.Now()
	for _, i := range []int{0, 1, 2} { // one device of each layout
		for _, tc := range []struct {
			name    string
			version gosnmp.SnmpVersion
			bulk    bool
		}{{"v2c-bulk", gosnmp.Version2c, true}, {"v2c-next", gosnmp.Version2c, false}, {"v1-next", gosnmp.Version1, false}} {
			t.Run(fmt.Sprintf("%s/%s", f.layoutOf(i).name, tc.name), func(t *testing.T) {
				g := client(t, s, tc.version, f.Name(i))
				walk := g.WalkAll
				if tc.bulk {
					walk = g.BulkWalkAll
				}
				got, err := walk("1.3.6.1")
				if err != nil {
					t.Fatal(err)
				}
				want := f.Walk(i, "1.3.6.1", now)
				if tc.version == gosnmp.Version1 { // v1 cannot carry Counter64: walks pass over them
					want = dropCounter64(want)
				}
				if err := sameVarbinds(got, want); err != nil {
					t.Fatal(err)
				}
				inOrder(t, got)
				// 8 system and ifNumber + 16 ifTable columns, 7 ifXTable ones
				// (5 without Counter64), host and UCD tables.
				rows := 48 * (16 + 7)
				if tc.version == gosnmp.Version1 {
					rows = 48 * (16 + 3)
				}
				if host := len(want) - 8 - rows; host != 2+6*6+2*2+4+3*4+3 {
					t.Errorf("%d varbinds outside the interface tables: %d", host, len(want))
				}
			})
		}
	}
}

func TestInterfacesLookLikeGear(t *testing.T) {
	o := gearOptions()
	f := newFleet(o)
	now := o.Now()
	for _, tc := range []struct {
		i                 int
		indexes           []int // the first five and the last
		names, descrs     []string
		mbps              uint64
		sysObjectIDPrefix string
	}{
		{0, []int{1, 2, 10101, 10102, 10103, 10146}, []string{"Vl1", "Gi0/0", "Gi1/0/1", "Gi1/0/2", "Gi1/0/3", "Gi1/0/46"},
			[]string{"Vlan1", "GigabitEthernet0/0", "GigabitEthernet1/0/1", "GigabitEthernet1/0/2", "GigabitEthernet1/0/3", "GigabitEthernet1/0/46"}, 1000, ".1.3.6.1.4.1.9.1."},
		{1, []int{1, 6, 513, 514, 515, 558}, []string{"fxp0", "lo0", "ge-0/0/0", "ge-0/0/1", "ge-0/0/2", "ge-0/0/45"},
			[]string{"fxp0", "lo0", "ge-0/0/0", "ge-0/0/1", "ge-0/0/2", "ge-0/0/45"}, 1000, ".1.3.6.1.4.1.2636."},
		{2, []int{83886080, 436207616, 436211712, 436215808, 436219904, 436207616 + 46<<12}, []string{"mgmt0", "Eth1/1", "Eth1/2", "Eth1/3", "Eth1/4", "Eth1/47"},
			[]string{"mgmt0", "Ethernet1/1", "Ethernet1/2", "Ethernet1/3", "Ethernet1/4", "Ethernet1/47"}, 10000, ".1.3.6.1.4.1.9.12."},
	} {
		ifs := f.Interfaces(tc.i, now)
		if len(ifs) != 48 {
			t.Fatalf("device %d: %d interfaces", tc.i, len(ifs))
		}
		pick := append(ifs[:5:5], ifs[47])
		var down, aliased int
		for k, ifc := range pick {
			if ifc.Index != tc.indexes[k] || ifc.Name != tc.names[k] || ifc.Descr != tc.descrs[k] {
				t.Errorf("device %d row %d: %d %q %q, want %d %q %q", tc.i, k, ifc.Index, ifc.Name, ifc.Descr, tc.indexes[k], tc.names[k], tc.descrs[k])
			}
		}
		if ifs[47].SpeedMbps != tc.mbps {
			t.Errorf("device %d: %d Mb/s", tc.i, ifs[47].SpeedMbps)
		}
		for _, ifc := range ifs {
			if !ifc.OperUp {
				down++
				oid := oidIfInOct + "." + strconv.Itoa(ifc.Index)
				if v0, v1 := f.Value(tc.i, oid, now).Value, f.Value(tc.i, oid, now.Add(time.Hour)).Value; v0 != v1 {
					t.Errorf("device %d %s: down, moved from %v to %v", tc.i, ifc.Name, v0, v1)
				}
				if st := f.Value(tc.i, oidIfOperSt+"."+strconv.Itoa(ifc.Index), now).Value; st != 2 {
					t.Errorf("device %d %s: ifOperStatus %v", tc.i, ifc.Name, st)
				}
			}
			if ifc.Alias != "" {
				aliased++
			}
		}
		if down != 12 || aliased < 10 {
			t.Errorf("device %d: %d of 48 down (want 12), %d with an alias", tc.i, down, aliased)
		}
		if id := f.Value(tc.i, "1.3.6.1.2.1.1.2.0", now).Value.(string); !strings.HasPrefix(id, tc.sysObjectIDPrefix) {
			t.Errorf("device %d: sysObjectID %s", tc.i, id)
		}
	}
}

func TestCounter32IsTheLowHalfOfHC(t *testing.T) {
	o := gearOptions()
	f := newFleet(o)
	now := o.Now()
	for _, ifc := range f.Interfaces(4, now) {
		inst := "." + strconv.Itoa(ifc.Index)
		hc := f.Value(4, oidIfHCIn+inst, now).Value.(uint64)
		c32 := f.Value(4, oidIfInOct+inst, now).Value.(uint)
		if uint64(c32) != hc&0xffffffff {
			t.Errorf("%s: ifInOctets %d, ifHCInOctets %d", ifc.Name, c32, hc)
		}
		rate, ok := f.Rate(4, oidIfInOct+inst, now)
		if !ok || (rate == 0) == ifc.OperUp {
			t.Errorf("%s: rate %d %v, oper up %v", ifc.Name, rate, ok, ifc.OperUp)
		}
		later := f.Value(4, oidIfHCIn+inst, now.Add(100*time.Second)).Value.(uint64)
		if later-hc != 100*rate {
			t.Errorf("%s: moved %d in 100 s at %d/s", ifc.Name, later-hc, rate)
		}
	}
	if _, ok := f.Rate(4, oidIfName+".1", now); ok {
		t.Error("ifName has a rate")
	}
}

func TestDeviceWithoutHCCounters(t *testing.T) {
	o := gearOptions()
	o.NoHC = 0.5
	s := serve(t, o)
	f := s.Fleet()
	var noHC []int
	for i := range o.Devices {
		if f.Behavior(i).NoHC {
			noHC = append(noHC, i)
		}
	}
	if len(noHC) != 6 {
		t.Fatalf("%d of 12 devices without HC counters: %v", len(noHC), noHC)
	}
	i := noHC[0]
	got, err := client(t, s, gosnmp.Version2c, f.Name(i)).BulkWalkAll(oidIfXTable)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameVarbinds(got, f.Walk(i, oidIfXTable, f.Now())); err != nil {
		t.Fatal(err)
	}
	cols := map[string]int{}
	for _, v := range got {
		o := parseOID(v.Name)
		cols[oidKey(o[:len(o)-1])]++
	}
	want := map[string]int{oidIfName: 48, "1.3.6.1.2.1.31.1.1.1.15": 48, "1.3.6.1.2.1.31.1.1.1.18": 48}
	if fmt.Sprint(cols) != fmt.Sprint(want) {
		t.Errorf("ifXTable columns %v, want %v", cols, want)
	}
	idx := strconv.Itoa(f.Interfaces(i, f.Now())[5].Index)
	pkt, err := client(t, s, gosnmp.Version2c, f.Name(i)).Get([]string{oidIfHCIn + "." + idx, oidIfInOct + "." + idx})
	if err != nil {
		t.Fatal(err)
	}
	if pkt.Variables[0].Type != gosnmp.NoSuchObject || pkt.Variables[1].Type != gosnmp.Counter32 {
		t.Errorf("HC-less device answers %v and %v", pkt.Variables[0].Type, pkt.Variables[1].Type)
	}
}

func TestRenumberingDeviceKeepsNamesUnderNewIndexes(t *testing.T) {
	o := gearOptions()
	s := serve(t, o)
	f := s.Fleet()
	const i = 3 // a catalyst
	f.SetBehavior(i, Behavior{Renumber: true})
	t0 := f.Now()
	walkNames := func() map[string]int {
		t.Helper()
		vs, err := client(t, s, gosnmp.Version2c, f.Name(i)).BulkWalkAll(oidIfName)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]int{}
		for _, v := range vs {
			o := parseOID(v.Name)
			m[string(v.Value.([]byte))] = int(o[len(o)-1])
		}
		return m
	}
	before := walkNames()
	rates := map[string]uint64{}
	for _, ifc := range f.Interfaces(i, t0) {
		rates[ifc.Name], _ = f.Rate(i, oidIfHCIn+"."+strconv.Itoa(ifc.Index), t0)
	}
	upBefore := f.Value(i, oidUptime0, t0).Value.(uint32)
	f.Restart(i, t0.Add(-time.Minute)) // a minute ago: the clock is fixed at t0
	after := walkNames()
	if len(before) != 48 || len(after) != 48 {
		t.Fatalf("%d names before the restart, %d after", len(before), len(after))
	}
	for name, idx := range before {
		nidx, ok := after[name]
		if !ok || nidx == idx {
			t.Errorf("%s: ifIndex %d before the restart, %d (%v) after", name, idx, nidx, ok)
		}
	}
	if up := f.Value(i, oidUptime0, t0).Value.(uint32); up != 6000 || up >= upBefore {
		t.Errorf("sysUpTime %d after the restart, %d before", up, upBefore)
	}
	for _, ifc := range f.Interfaces(i, t0) {
		inst := "." + strconv.Itoa(ifc.Index)
		if idx := after[ifc.Name]; idx != ifc.Index {
			t.Errorf("%s: walked at %d, Interfaces says %d", ifc.Name, idx, ifc.Index)
		}
		if r, _ := f.Rate(i, oidIfHCIn+inst, t0); r != rates[ifc.Name] {
			t.Errorf("%s: rate %d after the restart, %d before", ifc.Name, r, rates[ifc.Name])
		}
		v := f.Value(i, oidIfHCIn+inst, t0).Value.(uint64)
		if v >= 1<<30+60*rates[ifc.Name]+1 {
			t.Errorf("%s: ifHCInOctets %d a minute after the restart", ifc.Name, v)
		}
	}
}

func TestRenumberingFollowsPeriodicRestarts(t *testing.T) {
	o := gearOptions()
	o.Renumber, o.Restart = 1, 1
	f := newFleet(o)
	t0 := o.Now()
	before, after := f.Interfaces(2, t0), f.Interfaces(2, t0.Add(o.RestartEvery))
	byPort := map[int]Interface{}
	for _, ifc := range before {
		byPort[ifc.Port] = ifc
	}
	for _, ifc := range after {
		was := byPort[ifc.Port]
		if was.Name != ifc.Name || was.Index == ifc.Index {
			t.Errorf("port %d: %s at %d, an hour later %s at %d", ifc.Port, was.Name, was.Index, ifc.Name, ifc.Index)
		}
	}
	if f.UptimeTicks(2, t0.Add(o.RestartEvery)) >= f.UptimeTicks(2, t0.Add(o.RestartEvery-time.Second)) {
		t.Error("sysUpTime did not go back at the restart")
	}
}

func bulk(t *testing.T, g *gosnmp.GoSNMP, oids []string, nonRepeaters uint8, maxReps uint32) []gosnmp.SnmpPDU {
	t.Helper()
	pkt, err := g.GetBulk(oids, nonRepeaters, maxReps)
	if err != nil {
		t.Fatal(err)
	}
	if pkt.Error != gosnmp.NoError {
		t.Fatalf("GetBulk: %v", pkt.Error)
	}
	return pkt.Variables
}

func TestGetBulkEdges(t *testing.T) {
	o := gearOptions()
	o.MaxBulkVarbinds = 100
	s := serve(t, o)
	f := s.Fleet()
	now := f.Now()
	g := client(t, s, gosnmp.Version2c, f.Name(0))
	all := f.Walk(0, "", now)
	last := all[len(all)-1].Name
	walk := func(after string, n int) []gosnmp.SnmpPDU { // the n varbinds after an OID
		k := slices.IndexFunc(all, func(v gosnmp.SnmpPDU) bool { return slices.Compare(parseOID(v.Name), parseOID(after)) > 0 })
		return slices.Clone(all[k : k+n])
	}
	end := gosnmp.SnmpPDU{Name: last, Type: gosnmp.EndOfMibView}
	for _, tc := range []struct {
		name         string
		oids         []string
		nonRepeaters uint8
		maxReps      uint32
		want         []gosnmp.SnmpPDU
	}{
		{"max-repetitions 0", []string{"1.3.6.1.2.1.1.1.0", oidIfName}, 1, 0, walk("1.3.6.1.2.1.1.1.0", 1)},
		{"max-repetitions 0 no non-repeater", []string{oidIfName}, 0, 0, nil},
		{"non-repeaters beyond the varbinds", []string{oidIfName, oidIfHCIn}, 9, 20, append(walk(oidIfName, 1), walk(oidIfHCIn, 1)...)},
		{"huge max-repetitions is capped", []string{oidIfName}, 0, 1 << 30, walk(oidIfName, 100)},
		{"two repeaters interleave", []string{oidIfName, oidIfHCIn}, 0, 2, []gosnmp.SnmpPDU{walk(oidIfName, 2)[0], walk(oidIfHCIn, 2)[0], walk(oidIfName, 2)[1], walk(oidIfHCIn, 2)[1]}},
		{"end of the view", []string{all[len(all)-2].Name}, 0, 5, []gosnmp.SnmpPDU{all[len(all)-1], end}},
		{"past the end", []string{"1.4"}, 0, 3, []gosnmp.SnmpPDU{{Name: ".1.4", Type: gosnmp.EndOfMibView}}},
		{"non-repeater at the end", []string{last, oidIfName}, 1, 1, []gosnmp.SnmpPDU{end, walk(oidIfName, 1)[0]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := bulk(t, g, tc.oids, tc.nonRepeaters, tc.maxReps)
			if err := sameVarbinds(got, tc.want); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestEndOfTheView(t *testing.T) {
	o := gearOptions()
	s := serve(t, o)
	f := s.Fleet()
	all := f.Walk(5, "", f.Now())
	last := all[len(all)-1].Name
	pkt, err := client(t, s, gosnmp.Version2c, f.Name(5)).GetNext([]string{last, "1.3.6.1.2.1.1.5.0"})
	if err != nil {
		t.Fatal(err)
	}
	if v := pkt.Variables; v[0].Type != gosnmp.EndOfMibView || v[0].Name != last || v[1].Name != ".1.3.6.1.2.1.1.6.0" {
		t.Errorf("v2c GetNext past the end: %v", v)
	}
	pkt, err = client(t, s, gosnmp.Version1, f.Name(5)).GetNext([]string{"1.3.6.1.2.1.1.5.0", last})
	if err != nil {
		t.Fatal(err)
	}
	if pkt.Error != gosnmp.NoSuchName || pkt.ErrorIndex != 2 || pkt.Variables[1].Name != last {
		t.Errorf("v1 GetNext past the end: %v index %d, %v", pkt.Error, pkt.ErrorIndex, pkt.Variables)
	}
}

func TestResponsesFitTheMessageSize(t *testing.T) {
	o := gearOptions()
	o.MaxMessageSize = 484
	s := serve(t, o)
	f := s.Fleet()
	g := client(t, s, gosnmp.Version2c, f.Name(1))
	got := bulk(t, g, []string{oidIfHCIn}, 0, 100)
	if len(got) < 10 || len(got) >= 100 {
		t.Errorf("GetBulk within 484 bytes: %d varbinds", len(got))
	}
	if err := sameVarbinds(got, f.Walk(1, oidIfHCIn, f.Now())[:len(got)]); err != nil {
		t.Error(err)
	}
	vs, err := g.BulkWalkAll(oidIfXTable) // a walk goes on where a cut response ended
	if err != nil {
		t.Fatal(err)
	}
	if err := sameVarbinds(vs, f.Walk(1, oidIfXTable, f.Now())); err != nil {
		t.Error(err)
	}
	var oids []string
	for _, v := range f.Walk(1, oidIfHCIn, f.Now())[:40] {
		oids = append(oids, v.Name)
	}
	pkt, err := g.Get(oids)
	if err != nil {
		t.Fatal(err)
	}
	if pkt.Error != gosnmp.TooBig || len(pkt.Variables) != 0 {
		t.Errorf("a Get of 40 counters in 484 bytes: %v, %d varbinds", pkt.Error, len(pkt.Variables))
	}
	if st := s.Stats(); st.TooBig < 2 || st.Gets != 1 || st.GetBulks < 2 {
		t.Errorf("stats %+v", st)
	}
}

// FuzzGetNext checks the order of the view: the successor of any OID is
// after it, and nothing the device serves lies between them.
func FuzzGetNext(f *testing.F) {
	o := gearOptions()
	fl := newFleet(o)
	f.Add(0, 3, []byte{})
	f.Add(250, 11, []byte{0, 255})
	f.Add(1000, 12, []byte{7})
	f.Fuzz(func(t *testing.T, device, cut int, tail []byte) {
		i := max(device, -device) % o.Devices
		b := Behavior{NoHC: device%2 == 1, Missing: device%3 == 1, Renumber: true}
		sh := fl.shapeOf(i, b)
		base := sh.entries[max(cut, -cut)%len(sh.entries)].oid
		oid := slices.Clone(base[:min(max(cut, -cut)%16, len(base))])
		for _, x := range tail {
			oid = append(oid, uint32(x)*uint32(x)*1000) // reaches past the large ifIndexes
		}
		for _, v1 := range []bool{false, true} {
			k := sh.next(oid, v1)
			if k < len(sh.entries) && slices.Compare(sh.entries[k].oid, oid) <= 0 {
				t.Fatalf("next of %v is %v", oid, sh.entries[k].oid)
			}
			for j := k - 1; j >= 0 && slices.Compare(sh.entries[j].oid, oid) > 0; j-- {
				if !v1 || sh.entries[j].col.typ != gosnmp.Counter64 {
					t.Fatalf("next of %v is %v, skipping %v", oid, sh.entries[min(k, len(sh.entries)-1)].oid, sh.entries[j].oid)
				}
			}
		}
	})
}
