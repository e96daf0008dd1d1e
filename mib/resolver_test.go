package mib

import (
	"errors"
	"strings"
	"testing"
)

func TestResolveAcceptsEveryForm(t *testing.T) {
	r := Builtin()
	for _, tc := range []struct{ name, want string }{
		{"1.3.6.1.2.1.31.1.1.1.6.3", "1.3.6.1.2.1.31.1.1.1.6.3"},
		{".1.3.6.1.2.1.1.3.0", "1.3.6.1.2.1.1.3.0"},
		{"IF-MIB::ifHCInOctets", "1.3.6.1.2.1.31.1.1.1.6"},
		{"IF-MIB::ifHCInOctets.3", "1.3.6.1.2.1.31.1.1.1.6.3"},
		{"ifHCInOctets", "1.3.6.1.2.1.31.1.1.1.6"},
		{"sysUpTime.0", "1.3.6.1.2.1.1.3.0"},
		{"SNMPv2-MIB::sysUpTime.0", "1.3.6.1.2.1.1.3.0"},
		{"hrStorageFixedDisk", "1.3.6.1.2.1.25.2.1.4"},
		{"UCD-SNMP-MIB::laLoadInt.1", "1.3.6.1.4.1.2021.10.1.5.1"},
		{"ssCpuRawUser.0", "1.3.6.1.4.1.2021.11.50.0"},
		{"mib-2", "1.3.6.1.2.1"},
		{"ifHCInOctets.10101", "1.3.6.1.2.1.31.1.1.1.6.10101"},
		{"ifHCInOctets.4294967295", "1.3.6.1.2.1.31.1.1.1.6.4294967295"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.Resolve(tc.name)
			if err != nil || got != tc.want {
				t.Errorf("Resolve(%q) = %q, %v; want %q", tc.name, got, err, tc.want)
			}
		})
	}
}

func TestResolveRefusesWithTheReason(t *testing.T) {
	r := Builtin()
	for _, tc := range []struct {
		name   string
		reason error // nil: a syntax error
		says   string
	}{
		{"ifHCInOctetz", ErrUnknownName, `"ifHCInOctetz": no loaded module defines it`},
		{"IF-MIB::sysUpTime", ErrUnknownName, "module IF-MIB does not define sysUpTime"},
		{"ACME-MIB::acmeTemp.0", ErrUnknownModule, "module ACME-MIB"},
		{"ifHCInOctets.", nil, "instance suffix"},
		{"ifHCInOctets.x", nil, "instance suffix"},
		{"ifHCInOctets.01", nil, "instance suffix"},
		{"ifHCInOctets.4294967296", nil, "instance suffix"},
		{"::ifIndex", nil, "want MODULE::object"},
		{"IF-MIB::", nil, "want MODULE::object"},
		{"", nil, "want MODULE::object"},
		{"1", nil, "at least 2 arcs"},
		{"3.6.1", nil, "first arc"},
		{"1.3..6", nil, "bad arc"},
		{".1.3.6.1.2.1.1.3.0.", nil, "bad arc"},
		{"ifIndex" + strings.Repeat(".1", 119), nil, "more than 128 arcs"},
	} {
		t.Run(tc.name[:min(len(tc.name), 40)], func(t *testing.T) {
			oid, err := r.Resolve(tc.name)
			var ne *NameError
			if !errors.As(err, &ne) || ne.Name != tc.name {
				t.Fatalf("Resolve(%q) = %q, %v; want a *NameError for it", tc.name, oid, err)
			}
			if tc.reason != nil && !errors.Is(err, tc.reason) {
				t.Errorf("error %v: want reason %v", err, tc.reason)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q: want it to say %q", err, tc.says)
			}
		})
	}
}

func TestNameIsTheLongestKnownPrefix(t *testing.T) {
	r := Builtin()
	for _, tc := range []struct{ oid, want string }{
		{"1.3.6.1.2.1.31.1.1.1.6.3", "IF-MIB::ifHCInOctets.3"},
		{".1.3.6.1.2.1.1.3.0", "SNMPv2-MIB::sysUpTime.0"},
		{"1.3.6.1.2.1.2.2.1.8", "IF-MIB::ifOperStatus"},
		{"1.3.6.1.4.1.2021.10.1.5.2", "UCD-SNMP-MIB::laLoadInt.2"},
		{"1.3.6.1.4.1.9.9.13", "SNMPv2-SMI::enterprises.9.9.13"},
		{"1.3.6.1.2.1.25.2.1.4", "HOST-RESOURCES-TYPES::hrStorageFixedDisk"},
		{"2.999", "2.999"},
		{".2.999.1", "2.999.1"},
	} {
		t.Run(tc.oid, func(t *testing.T) {
			if got := r.Name(tc.oid); got != tc.want {
				t.Errorf("Name(%q) = %q, want %q", tc.oid, got, tc.want)
			}
		})
	}
}

// TestNameResolvesBack: the name of every built-in object's instance
// resolves to that instance.
func TestNameResolvesBack(t *testing.T) {
	r := Builtin()
	for _, o := range r.byQualified {
		oid := o.OID + ".7"
		if got, err := r.Resolve(r.Name(oid)); err != nil || got != oid {
			t.Errorf("%s: Resolve(Name(%s)) = %q, %v", o.QualifiedName(), oid, got, err)
		}
	}
}

func TestObjectCarriesSyntaxAndLabels(t *testing.T) {
	r := Builtin()
	for _, tc := range []struct {
		name, syntax, base string
		kind               Kind
		suffix             string
	}{
		{"ifHCInOctets.3", "Counter64", BaseCounter64, Column, "3"},
		{"ifInOctets", "Counter32", BaseCounter32, Column, ""},
		{"ifHighSpeed", "Gauge32", BaseGauge32, Column, ""},
		{"ifDescr", "DisplayString", BaseOctetString, Column, ""},
		{"ifMtu", "Integer32", BaseInteger, Column, ""},
		{"sysUpTime.0", "TimeTicks", BaseTimeTicks, Scalar, "0"},
		{"hrStorageType", "AutonomousType", BaseOID, Column, ""},
		{"memTotalRealX", "CounterBasedGauge64", BaseCounter64, Scalar, ""},
		{"1.3.6.1.2.1.2.2.1.7.5", "INTEGER", BaseInteger, Column, "5"},
		{"ifTable", "", "", Table, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, suffix, err := r.Object(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			if o.Syntax != tc.syntax || o.Base != tc.base || o.Kind != tc.kind || suffix != tc.suffix {
				t.Errorf("%s: %v %q base %q suffix %q; want %v %q base %q suffix %q",
					o.QualifiedName(), o.Kind, o.Syntax, o.Base, suffix, tc.kind, tc.syntax, tc.base, tc.suffix)
			}
		})
	}
}

func TestFilterValues(t *testing.T) {
	r := Builtin()
	for _, tc := range []struct{ column, value, want, err string }{
		{"ifOperStatus", "up", "1", ""},
		{"ifOperStatus", "lowerLayerDown", "7", ""},
		{"ifOperStatus", "2", "2", ""},
		{"ifAdminStatus", "down", "2", ""},
		{"ifType", "ethernetCsmacd", "6", ""},
		{"ifType", "softwareLoopback", "24", ""},
		{"ifType", "ieee8023adLag", "161", ""},
		{"ifType", "282", "282", ""},
		{"ifPromiscuousMode", "true", "1", ""},
		{"hrStorageType", "hrStorageFixedDisk", "1.3.6.1.2.1.25.2.1.4", ""},
		{"hrStorageType", "HOST-RESOURCES-TYPES::hrStorageRam", "1.3.6.1.2.1.25.2.1.2", ""},
		{"hrStorageType", ".1.3.6.1.2.1.25.2.1.9", "1.3.6.1.2.1.25.2.1.9", ""},
		{"ifDescr", "eth0", "eth0", ""},
		{"ifOperStatus", "upp", "", `"upp" is not one of its labels (up, down, testing`},
		{"ifOperStatus", "01", "", "not one of its labels"},
		{"ifType", "ethernet", "", "..."},
		{"hrStorageType", "hrStorageFixedDsk", "", "hrStorageFixedDsk"},
	} {
		t.Run(tc.column+"="+tc.value, func(t *testing.T) {
			col, _, err := r.Object(tc.column)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.FilterValue(col, tc.value)
			if tc.err == "" && (err != nil || got != tc.want) {
				t.Errorf("FilterValue = %q, %v; want %q", got, err, tc.want)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), col.QualifiedName())) {
				t.Errorf("FilterValue = %q, %v; want an error naming %s and saying %q", got, err, col.QualifiedName(), tc.err)
			}
		})
	}
}

func TestEnumLabels(t *testing.T) {
	o, _, err := Builtin().Object("ifOperStatus")
	if err != nil {
		t.Fatal(err)
	}
	for v, label := range []string{1: "up", 2: "down", 3: "testing", 4: "unknown", 5: "dormant", 6: "notPresent", 7: "lowerLayerDown"} {
		if v == 0 {
			continue
		}
		if got, ok := o.EnumLabel(int64(v)); !ok || got != label {
			t.Errorf("EnumLabel(%d) = %q, %v; want %q", v, got, ok, label)
		}
	}
	if got, ok := o.EnumLabel(8); ok {
		t.Errorf("EnumLabel(8) = %q, want none", got)
	}
}
