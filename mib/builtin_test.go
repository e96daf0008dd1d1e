package mib

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// TestBuiltinTableIsWellFormed checks the table's own rules: each object
// once per module, a valid OID, columns under rows under tables, a
// syntax (with its base) for every scalar and column and none for nodes.
func TestBuiltinTableIsWellFormed(t *testing.T) {
	objs, err := builtinObjects()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	byOID := map[string]*Object{}
	for _, o := range objs {
		if seen[o.QualifiedName()] {
			t.Errorf("%s: defined twice", o.QualifiedName())
		}
		seen[o.QualifiedName()] = true
		if n, err := checkArcs(o.OID); err != nil || o.OID[0] > '2' || (n > 1 && o.OID[1] != '.') {
			t.Errorf("%s: OID %q: %v", o.QualifiedName(), o.OID, err)
		}
		if other := byOID[o.OID]; other != nil {
			t.Errorf("%s and %s: both at %s", other.QualifiedName(), o.QualifiedName(), o.OID)
		}
		byOID[o.OID] = o
		hasSyntax := o.Kind == Scalar || o.Kind == Column
		if hasSyntax != (o.Syntax != "") || hasSyntax != (o.Base != "") {
			t.Errorf("%s: %v with syntax %q base %q", o.QualifiedName(), o.Kind, o.Syntax, o.Base)
		}
	}
	parentKind := map[Kind]Kind{Column: Row, Row: Table}
	for _, o := range objs {
		want, ok := parentKind[o.Kind]
		if !ok {
			continue
		}
		parent := byOID[o.OID[:strings.LastIndexByte(o.OID, '.')]]
		if parent == nil || parent.Kind != want {
			t.Errorf("%s (%v): parent %v, want a %v", o.QualifiedName(), o.Kind, parent, want)
		}
	}
}

// pysnmpMIBs is where Debian's python3-pysnmp4-mibs puts its compiled
// IETF modules (IF-MIB, HOST-RESOURCES-MIB, ...); python3-pysnmp4 itself
// has SNMPv2-SMI and SNMPv2-MIB.
const pysnmpMIBs = "/usr/lib/python3/dist-packages/pysnmp_mibs"

// pysnmpSyntax is the class pysnmp gives each syntax of the table.
var pysnmpSyntax = map[string]string{"INTEGER": "Integer32", "OBJECT IDENTIFIER": "ObjectIdentifier"}

// pysnmpKind is the class pysnmp gives each kind of object.
var pysnmpKind = map[string]Kind{
	"MibScalar": Scalar, "MibTableColumn": Column, "MibTable": Table, "MibTableRow": Row,
	"MibTree": Node, "MibIdentifier": Node, "ObjectIdentity": Node, "ModuleIdentity": Node,
}

type pysnmpObject struct {
	Module, Name, OID, Class, Syntax string
	Enums                            map[string]int64
}

// TestBuiltinMatchesPysnmp checks every built-in object of the IETF
// modules against pysnmp's compiled copies of those modules, made from
// the modules' own text by another project: OID, kind, syntax and every
// enumeration label. Debian ships no IETF MIB text (net-snmp's
// snmptranslate cannot check these here), but it ships pysnmp's copies.
func TestBuiltinMatchesPysnmp(t *testing.T) {
	python := "/usr/bin/python3"
	if _, err := os.Stat(filepath.Join(pysnmpMIBs, "IF-MIB.py")); err != nil {
		testenv.Missing(t, "pysnmp's MIB modules (Debian python3-pysnmp4-mibs): %v", err)
	}
	objs, err := builtinObjects()
	if err != nil {
		t.Fatal(err)
	}
	var in bytes.Buffer
	var checked []*Object
	for _, o := range objs {
		if o.Module != "UCD-SNMP-MIB" {
			fmt.Fprintln(&in, o.Module, o.Name)
			checked = append(checked, o)
		}
	}
	cmd := exec.Command(python, "testdata/pysnmp_dump.py", pysnmpMIBs)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pysnmp: %v (%s)", err, stderrOf(err))
	}
	var got []pysnmpObject
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(checked) {
		t.Fatalf("pysnmp answered %d objects, asked %d", len(got), len(checked))
	}
	for i, o := range checked {
		p := got[i]
		if p.OID != o.OID {
			t.Errorf("%s: OID %s, pysnmp %s", o.QualifiedName(), o.OID, p.OID)
		}
		if k, ok := pysnmpKind[p.Class]; !ok || k != o.Kind {
			t.Errorf("%s: %v, pysnmp %s", o.QualifiedName(), o.Kind, p.Class)
		}
		want := o.Syntax
		if w, ok := pysnmpSyntax[want]; ok {
			want = w
		}
		if p.Syntax != want {
			t.Errorf("%s: syntax %q, pysnmp %q", o.QualifiedName(), o.Syntax, p.Syntax)
		}
		compareEnums(t, o, p.Enums, o.Syntax == "IANAifType")
	}
}

// compareEnums checks o's labels against another source's. For an open
// registry (IANAifType) both lists stop at their own date: the labels
// both have must agree, and every one of the other's up to o's last must
// be there.
func compareEnums(t *testing.T, o *Object, want map[string]int64, registry bool) {
	t.Helper()
	var last int64
	if n := len(o.Enums); n > 0 {
		last = o.Enums[n-1].Value
	}
	for label, v := range want {
		got, ok := o.EnumValue(label)
		switch {
		case ok && got != v:
			t.Errorf("%s: %s(%d), the other says %s(%d)", o.QualifiedName(), label, got, label, v)
		case !ok && (!registry || v <= last):
			t.Errorf("%s: no label %s(%d)", o.QualifiedName(), label, v)
		}
	}
	if !registry && len(o.Enums) != len(want) {
		t.Errorf("%s: %d labels, the other %d", o.QualifiedName(), len(o.Enums), len(want))
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// netsnmpMIBs is where Debian's libsnmp-base puts net-snmp's own MIBs
// (UCD-SNMP-MIB among them; the IETF ones are not in Debian).
const netsnmpMIBs = "/usr/share/snmp/mibs"

// TestBuiltinMatchesSnmptranslate checks built-in objects against
// net-snmp's snmptranslate reading the MIB text: UCD-SNMP-MIB from
// net-snmp's own file (with this package's base modules for its imports,
// as Debian has no SNMPv2-SMI), and each IETF module whose file the
// machine has.
func TestBuiltinMatchesSnmptranslate(t *testing.T) {
	snmptranslate := testenv.LookPath(t, "snmptranslate", "the independent check of the built-in OIDs")
	if _, err := os.Stat(filepath.Join(netsnmpMIBs, "UCD-SNMP-MIB.txt")); err != nil {
		testenv.Missing(t, "net-snmp's UCD-SNMP-MIB (Debian libsnmp-base): %v", err)
	}
	objs, err := builtinObjects()
	if err != nil {
		t.Fatal(err)
	}
	byModule := map[string][]*Object{}
	for _, o := range objs {
		byModule[o.Module] = append(byModule[o.Module], o)
	}
	base, _ := filepath.Abs("base")
	for module, list := range byModule {
		tree, err := translateTree(snmptranslate, base+":"+netsnmpMIBs, module)
		if err != nil {
			if module == "UCD-SNMP-MIB" || module == "SNMPv2-SMI" {
				t.Errorf("%s: %v", module, err)
			} else {
				t.Logf("%s: no MIB file here, checked against pysnmp only: %v", module, err)
			}
			continue
		}
		for _, o := range list {
			if !strings.Contains(o.OID, ".") {
				continue // -Tz prints the tree below its roots (iso)
			}
			if got, ok := tree[o.Name]; !ok || got != o.OID {
				t.Errorf("%s: OID %s, snmptranslate %q", o.QualifiedName(), o.OID, got)
			}
		}
	}
}

// translateTree returns snmptranslate -Tz's names and OIDs of module and
// what it imports, from the MIB directories path; an error if net-snmp
// cannot load the module.
func translateTree(snmptranslate, path, module string) (map[string]string, error) {
	cmd := exec.Command(snmptranslate, "-M", path, "-m", module, "-Tz")
	cmd.Env = append(os.Environ(), "MIBS=", "MIBDIRS=")
	out, err := cmd.CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("Cannot find module ("+module+")")) {
		return nil, fmt.Errorf("snmptranslate -m %s: %v: %s", module, err, firstLine(out))
	}
	tree := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && strings.HasPrefix(f[0], `"`) {
			tree[strings.Trim(f[0], `"`)] = strings.Trim(f[1], `"`)
		}
	}
	return tree, nil
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(string(b), "\n")
	return s
}
