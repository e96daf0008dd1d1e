package simulate

import (
	"encoding/hex"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/gosnmp/gosnmp"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// netSNMPVarbind is one line of net-snmp's `-On -Oe -Ot` output read back
// into a name, a type and a value printed as fmt prints the simulator's.
type netSNMPVarbind struct {
	name  string
	typ   gosnmp.Asn1BER
	value string
}

// parseNetSNMP reads snmpwalk's output, "OID = TYPE: value" a line.
func parseNetSNMP(t *testing.T, out string) []netSNMPVarbind {
	t.Helper()
	types := map[string]gosnmp.Asn1BER{
		"STRING": gosnmp.OctetString, "Hex-STRING": gosnmp.OctetString, "INTEGER": gosnmp.Integer,
		"Counter32": gosnmp.Counter32, "Counter64": gosnmp.Counter64, "Gauge32": gosnmp.Gauge32, "OID": gosnmp.ObjectIdentifier,
	}
	var vs []netSNMPVarbind
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		name, val, ok := strings.Cut(line, " = ")
		if !ok {
			t.Fatalf("net-snmp line %q", line)
		}
		v := netSNMPVarbind{name: name}
		typ, text, typed := strings.Cut(val, ": ")
		switch {
		case val == `""`:
			v.typ, v.value = gosnmp.OctetString, "[]"
		case !typed: // -Ot: TimeTicks as a bare number
			v.typ, v.value = gosnmp.TimeTicks, val
		case typ == "STRING":
			v.typ, v.value = gosnmp.OctetString, fmt.Sprint([]byte(strings.Trim(text, `"`)))
		case typ == "Hex-STRING":
			b, err := hex.DecodeString(strings.ReplaceAll(text, " ", ""))
			if err != nil {
				t.Fatalf("net-snmp line %q: %v", line, err)
			}
			v.typ, v.value = gosnmp.OctetString, fmt.Sprint(b)
		default:
			if v.typ, ok = types[typ]; !ok {
				t.Fatalf("net-snmp line %q: type %s", line, typ)
			}
			v.value = text
		}
		vs = append(vs, v)
	}
	return vs
}

// TestNetSNMPWalksWhatTheFleetServes walks devices of every layout, one
// without HC counters and one with half its interfaces missing, with
// net-snmp's own snmpbulkwalk (v2c) and snmpwalk (v1), and compares each
// line with what the simulator says it serves.
func TestNetSNMPWalksWhatTheFleetServes(t *testing.T) {
	bulkwalk := testenv.LookPath(t, "snmpbulkwalk", "an independent client walking the simulated tables")
	walk := testenv.LookPath(t, "snmpwalk", "an independent client walking the simulated tables")
	s := serve(t, gearOptions())
	f := s.Fleet()
	f.SetBehavior(4, Behavior{NoHC: true})
	f.SetBehavior(5, Behavior{Missing: true})
	addr := "127.0.0.1:" + strconv.Itoa(s.Addr().Port)
	for _, tc := range []struct {
		i       int
		v1      bool
		root    string
		reps    int
		entries int
	}{
		{0, false, oidIfXTable, 25, 48 * 7},
		{1, false, oidIfXTable, 10, 48 * 7},
		{2, false, "1.3.6.1.2.1", 50, 8 + 48*23 + 2 + 36 + 4},
		{4, false, oidIfXTable, 25, 48 * 3},
		{5, false, oidIfXTable, 25, 24 * 6},
		{3, true, oidIfTable, 0, 48 * 16},
		{1, true, oidIfXTable, 0, 48 * 3},
	} {
		name := fmt.Sprintf("%s/%s/v2c", f.Name(tc.i), tc.root)
		cmd := exec.Command(bulkwalk, "-v2c", "-c", f.Name(tc.i), "-On", "-Oe", "-Ot", "-Cr"+strconv.Itoa(tc.reps), "-r0", "-t3", addr, "."+tc.root)
		if tc.v1 {
			name = strings.Replace(name, "v2c", "v1", 1)
			cmd = exec.Command(walk, "-v1", "-c", f.Name(tc.i), "-On", "-Oe", "-Ot", "-r0", "-t3", addr, "."+tc.root)
		}
		t.Run(name, func(t *testing.T) {
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", cmd, err, out)
			}
			got := parseNetSNMP(t, string(out))
			want := f.Walk(tc.i, tc.root, f.Now())
			if tc.v1 {
				want = dropCounter64(want)
			}
			if len(got) != tc.entries || len(want) != tc.entries {
				t.Errorf("net-snmp read %d varbinds, the fleet serves %d, want %d", len(got), len(want), tc.entries)
			}
			for k := range min(len(got), len(want)) {
				g, w := got[k], want[k]
				if g.name != w.Name || g.typ != w.Type || g.value != fmt.Sprint(w.Value) {
					t.Fatalf("varbind %d: net-snmp read %s %v %s, the fleet serves %s %v %v", k, g.name, g.typ, g.value, w.Name, w.Type, w.Value)
				}
			}
		})
	}
}

func dropCounter64(vs []gosnmp.SnmpPDU) []gosnmp.SnmpPDU {
	out := vs[:0:0]
	for _, v := range vs {
		if v.Type != gosnmp.Counter64 {
			out = append(out, v)
		}
	}
	return out
}
