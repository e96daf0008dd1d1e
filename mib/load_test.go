package mib

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// acmeMIB is a small but real SMIv2 module, as a vendor ships one: a
// module identity under enterprises, a textual convention with labels, a
// scalar and a table, importing from SNMPv2-SMI and SNMPv2-TC.
const acmeMIB = `ACME-ROUTER-MIB DEFINITIONS ::= BEGIN

IMPORTS
    MODULE-IDENTITY, OBJECT-TYPE, enterprises, Integer32, Counter64
        FROM SNMPv2-SMI
    DisplayString, TEXTUAL-CONVENTION
        FROM SNMPv2-TC;

acmeRouter MODULE-IDENTITY
    LAST-UPDATED "202611250000Z"
    ORGANIZATION "Acme"
    CONTACT-INFO "noc@acme.example"
    DESCRIPTION  "Acme routers."
    ::= { enterprises 99999 }

AcmeFanState ::= TEXTUAL-CONVENTION
    STATUS       current
    DESCRIPTION  "The state of a fan."
    SYNTAX       INTEGER { ok(1), failed(2), absent(3) }

acmeObjects OBJECT IDENTIFIER ::= { acmeRouter 1 }

acmeTemperature OBJECT-TYPE
    SYNTAX      Integer32 (-40..125)
    UNITS       "degrees Celsius"
    MAX-ACCESS  read-only
    STATUS      current
    DESCRIPTION "The chassis temperature."
    ::= { acmeObjects 1 }

acmeFanTable OBJECT-TYPE
    SYNTAX      SEQUENCE OF AcmeFanEntry
    MAX-ACCESS  not-accessible
    STATUS      current
    DESCRIPTION "The fans."
    ::= { acmeObjects 2 }

acmeFanEntry OBJECT-TYPE
    SYNTAX      AcmeFanEntry
    MAX-ACCESS  not-accessible
    STATUS      current
    DESCRIPTION "One fan."
    INDEX       { acmeFanIndex }
    ::= { acmeFanTable 1 }

AcmeFanEntry ::= SEQUENCE {
    acmeFanIndex       Integer32,
    acmeFanName        DisplayString,
    acmeFanState       AcmeFanState,
    acmeFanRevolutions Counter64
}

acmeFanIndex OBJECT-TYPE
    SYNTAX      Integer32 (1..64)
    MAX-ACCESS  not-accessible
    STATUS      current
    DESCRIPTION "The fan's number."
    ::= { acmeFanEntry 1 }

acmeFanName OBJECT-TYPE
    SYNTAX      DisplayString
    MAX-ACCESS  read-only
    STATUS      current
    DESCRIPTION "The fan's name."
    ::= { acmeFanEntry 2 }

acmeFanState OBJECT-TYPE
    SYNTAX      AcmeFanState
    MAX-ACCESS  read-only
    STATUS      current
    DESCRIPTION "The fan's state."
    ::= { acmeFanEntry 3 }

acmeFanRevolutions OBJECT-TYPE
    SYNTAX      Counter64
    MAX-ACCESS  read-only
    STATUS      current
    DESCRIPTION "Revolutions since start."
    ::= { acmeFanEntry 4 }

acmeLinkState OBJECT-TYPE
    SYNTAX      INTEGER { up(1), down(2) }
    MAX-ACCESS  read-only
    STATUS      current
    DESCRIPTION "The uplink's state."
    ::= { acmeObjects 3 }

END
`

// otherMIB defines acmeTemperature too, as a second vendor's module may.
const otherMIB = `OTHER-VENDOR-MIB DEFINITIONS ::= BEGIN

IMPORTS
    OBJECT-TYPE, enterprises, Integer32 FROM SNMPv2-SMI;

otherVendor OBJECT IDENTIFIER ::= { enterprises 99998 }

acmeTemperature OBJECT-TYPE
    SYNTAX      Integer32
    MAX-ACCESS  read-only
    STATUS      current
    DESCRIPTION "A name clash."
    ::= { otherVendor 1 }

END
`

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// lineOf returns the line of text where s first is.
func lineOf(text, s string) int {
	return strings.Count(text[:strings.Index(text, s)], "\n") + 1
}

func load(t *testing.T, dirs ...string) (*Resolver, error) {
	t.Helper()
	return Load(Options{Dirs: dirs}, nil, nil)
}

func TestVendorMIBFromADirectory(t *testing.T) {
	dir := writeFiles(t, map[string]string{"acme-router.my": acmeMIB, "README": "not a MIB"})
	r, err := load(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, oid, syntax, base string }{
		{"ACME-ROUTER-MIB::acmeTemperature.0", "1.3.6.1.4.1.99999.1.1.0", "Integer32", BaseInteger},
		{"acmeFanName.2", "1.3.6.1.4.1.99999.1.2.1.2.2", "DisplayString", BaseOctetString},
		{"acmeFanState", "1.3.6.1.4.1.99999.1.2.1.3", "AcmeFanState", BaseInteger},
		{"acmeFanRevolutions", "1.3.6.1.4.1.99999.1.2.1.4", "Counter64", BaseCounter64},
		{"acmeLinkState", "1.3.6.1.4.1.99999.1.3", "INTEGER", BaseInteger},
		{"ifHCInOctets.1", "1.3.6.1.2.1.31.1.1.1.6.1", "Counter64", BaseCounter64},
	} {
		got, err := r.Resolve(tc.name)
		if err != nil || got != tc.oid {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.name, got, err, tc.oid)
			continue
		}
		o, _, _ := r.Object(tc.name)
		if o.Syntax != tc.syntax || o.Base != tc.base {
			t.Errorf("%s: syntax %q base %q, want %q %q", tc.name, o.Syntax, o.Base, tc.syntax, tc.base)
		}
	}
	if got := r.Name("1.3.6.1.4.1.99999.1.2.1.3.7"); got != "ACME-ROUTER-MIB::acmeFanState.7" {
		t.Errorf("Name = %q", got)
	}
	for _, col := range []struct{ name, value, want string }{
		{"acmeFanState", "failed", "2"}, {"acmeLinkState", "down", "2"},
	} {
		o, _, _ := r.Object(col.name)
		if got, err := r.FilterValue(o, col.value); err != nil || got != col.want {
			t.Errorf("FilterValue(%s, %s) = %q, %v; want %q", col.name, col.value, got, err, col.want)
		}
	}
	if f := r.Modules()["ACME-ROUTER-MIB"]; f != filepath.Join(dir, "acme-router.my") {
		t.Errorf("module's file %q", f)
	}
	if _, err := Builtin().Resolve("acmeTemperature"); !errors.Is(err, ErrUnknownName) {
		t.Errorf("the built-in resolver learned a loaded name: %v", err)
	}
}

func TestAmbiguousNameNamesBothModules(t *testing.T) {
	r, err := load(t, writeFiles(t, map[string]string{"ACME-ROUTER-MIB.txt": acmeMIB, "OTHER-VENDOR-MIB.txt": otherMIB}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Resolve("acmeTemperature.0")
	var ne *NameError
	if !errors.As(err, &ne) || !errors.Is(err, ErrAmbiguousName) {
		t.Fatalf("Resolve = %v, want ErrAmbiguousName", err)
	}
	if strings.Join(ne.Modules, ",") != "ACME-ROUTER-MIB,OTHER-VENDOR-MIB" {
		t.Errorf("modules %v", ne.Modules)
	}
	for _, want := range []string{"ACME-ROUTER-MIB", "OTHER-VENDOR-MIB", "MODULE::acmeTemperature"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	for name, want := range map[string]string{
		"ACME-ROUTER-MIB::acmeTemperature.0":  "1.3.6.1.4.1.99999.1.1.0",
		"OTHER-VENDOR-MIB::acmeTemperature.0": "1.3.6.1.4.1.99998.1.0",
	} {
		if got, err := r.Resolve(name); err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
}

func TestBrokenMIBIsAnErrorNamingTheFile(t *testing.T) {
	broken := strings.Replace(acmeMIB, "::= { acmeObjects 2 }", "::= { acmeObjects 2 ", 1)
	dir := writeFiles(t, map[string]string{"broken.mib": broken, "OTHER-VENDOR-MIB.txt": otherMIB})
	reg := prometheus.NewPedanticRegistry()
	m := NewLoadCache(reg)
	r, err := Load(Options{Dirs: []string{dir}}, nil, m)
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("Load = %v, want a *FileError", err)
	}
	// The parser stops at the first token that cannot go on the OID.
	file, line := filepath.Join(dir, "broken.mib"), lineOf(broken, `"One fan."`)
	if fe.File != file || fe.Line != line || !strings.Contains(err.Error(), fmt.Sprintf("%s line %d: parse:", file, line)) {
		t.Errorf("error %q: file %q line %d, want %s line %d", err, fe.File, fe.Line, file, line)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP spoold_mib_file_errors_total Problems with MIB files, at each load: a file that does not parse, an import from a module no MIB directory holds, objects whose syntax does not resolve.
# TYPE spoold_mib_file_errors_total counter
spoold_mib_file_errors_total 1
# HELP spoold_mib_modules_loaded MIB modules loaded from MIB directories by the last load.
# TYPE spoold_mib_modules_loaded gauge
spoold_mib_modules_loaded 1
`)); err != nil {
		t.Error(err)
	}
	// The other file's objects are loaded all the same.
	if oid, err := r.Resolve("acmeTemperature.0"); err != nil || oid != "1.3.6.1.4.1.99998.1.0" {
		t.Errorf("the good file's object: %q, %v", oid, err)
	}
	if _, err := r.Resolve("ifName"); err != nil {
		t.Errorf("a built-in object: %v", err)
	}
}

func TestMissingImportIsAnErrorAtItsLine(t *testing.T) {
	for _, tc := range []struct{ imports, says string }{
		{"SnmpAdminString FROM SNMP-FRAMEWORK-MIB", "imports SnmpAdminString from SNMP-FRAMEWORK-MIB: no MIB directory holds"},
		{"ifStackStatus FROM IF-MIB", "imports ifStackStatus from IF-MIB, which is built in only in part"},
	} {
		t.Run(tc.imports, func(t *testing.T) {
			text := strings.Replace(otherMIB, "Integer32 FROM SNMPv2-SMI;",
				"Integer32 FROM SNMPv2-SMI\n    "+tc.imports+";", 1)
			dir := writeFiles(t, map[string]string{"other.txt": text})
			r, err := load(t, dir)
			var fe *FileError
			if !errors.As(err, &fe) || !errors.Is(err, ErrMissingModule) {
				t.Fatalf("Load = %v, want ErrMissingModule", err)
			}
			if fe.File != filepath.Join(dir, "other.txt") || fe.Line != 5 || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q (line %d), want line 5 and %q", err, fe.Line, tc.says)
			}
			if _, err := r.Resolve("OTHER-VENDOR-MIB::acmeTemperature"); err != nil {
				t.Errorf("the module's other objects: %v", err)
			}
		})
	}
}

// ifVendorMIB extends IF-MIB as vendors do: a table that augments ifEntry
// and a column of type InterfaceIndex, imported from IF-MIB, which the
// machine has no file of.
const ifVendorMIB = `ACME-IF-MIB DEFINITIONS ::= BEGIN
IMPORTS
    OBJECT-TYPE, enterprises, Counter64 FROM SNMPv2-SMI
    ifEntry, InterfaceIndex FROM IF-MIB
    IANAifType FROM IANAifType-MIB;

acmeIf OBJECT IDENTIFIER ::= { enterprises 99997 }

acmeIfTable OBJECT-TYPE
    SYNTAX      SEQUENCE OF AcmeIfEntry
    MAX-ACCESS  not-accessible
    STATUS      current
    DESCRIPTION "Per interface."
    ::= { acmeIf 1 }

acmeIfEntry OBJECT-TYPE
    SYNTAX      AcmeIfEntry
    MAX-ACCESS  not-accessible
    STATUS      current
    DESCRIPTION "One interface."
    AUGMENTS    { ifEntry }
    ::= { acmeIfTable 1 }

AcmeIfEntry ::= SEQUENCE { acmeIfDrops Counter64, acmeIfPeer InterfaceIndex, acmeIfPeerType IANAifType }

acmeIfDrops OBJECT-TYPE
    SYNTAX      Counter64
    MAX-ACCESS  read-only
    STATUS      current
    DESCRIPTION "Drops."
    ::= { acmeIfEntry 1 }

acmeIfPeer OBJECT-TYPE
    SYNTAX      InterfaceIndex
    MAX-ACCESS  read-only
    STATUS      current
    DESCRIPTION "The peer interface."
    ::= { acmeIfEntry 2 }

acmeIfPeerType OBJECT-TYPE
    SYNTAX      IANAifType
    MAX-ACCESS  read-only
    STATUS      current
    DESCRIPTION "The peer interface's type."
    ::= { acmeIfEntry 3 }

END
`

// TestImportsFromBuiltInModules: a vendor MIB that imports from IF-MIB
// and IANAifType-MIB loads with no file of them (the built-in table's
// generated text stands in), types and labels resolved.
func TestImportsFromBuiltInModules(t *testing.T) {
	r, err := load(t, writeFiles(t, map[string]string{"acme-if.mib": ifVendorMIB}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, oid, syntax, base string }{
		{"acmeIfDrops.3", "1.3.6.1.4.1.99997.1.1.1.3", "Counter64", BaseCounter64},
		{"acmeIfPeer", "1.3.6.1.4.1.99997.1.1.2", "InterfaceIndex", BaseInteger},
		{"acmeIfPeerType", "1.3.6.1.4.1.99997.1.1.3", "IANAifType", BaseInteger},
	} {
		o, suffix, err := r.Object(tc.name)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		oid := o.OID
		if suffix != "" {
			oid += "." + suffix
		}
		if oid != tc.oid || o.Syntax != tc.syntax || o.Base != tc.base || o.Kind != Column {
			t.Errorf("%s: %s %v %q base %q; want %s column %q %q", tc.name, oid, o.Kind, o.Syntax, o.Base, tc.oid, tc.syntax, tc.base)
		}
	}
	o, _, _ := r.Object("acmeIfPeerType")
	if v, ok := o.EnumValue("ethernetCsmacd"); !ok || v != 6 {
		t.Errorf("acmeIfPeerType ethernetCsmacd = %d, %v", v, ok)
	}
	if f := r.Modules()["IF-MIB"]; f != "" {
		t.Errorf("IF-MIB's objects now come from %q, want the built-in table", f)
	}
}

// TestGeneratedModulesAreTheTable: the text generated for each built-in
// module, loaded through a MIB directory as if it were the module's file,
// gives back every object of the table: OID, kind, syntax, base and
// labels.
func TestGeneratedModulesAreTheTable(t *testing.T) {
	texts, _, err := generatedModules()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for name, text := range texts {
		files[name+".txt"] = string(text)
	}
	dir := writeFiles(t, files)
	r, err := load(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	objs, _ := builtinObjects()
	for _, b := range objs {
		if carriedModules[b.Module] {
			continue
		}
		o := r.byQualified[b.QualifiedName()]
		if r.Modules()[b.Module] != filepath.Join(dir, b.Module+".txt") {
			t.Fatalf("%s: not loaded from the directory", b.Module)
		}
		if o == nil || o.OID != b.OID || o.Kind != b.Kind || o.Syntax != b.Syntax || o.Base != b.Base || enumList(o.Enums) != enumList(b.Enums) {
			t.Errorf("%s: loaded %+v, built in %+v", b.QualifiedName(), o, b)
		}
	}
}

// TestUnresolvedSyntaxIsAnError: a type gosmi cannot resolve (here one
// naming a type nobody defines) silently takes every later type of the
// module with it; the objects keep their OIDs, and the file is reported
// at the first object left without a syntax.
func TestUnresolvedSyntaxIsAnError(t *testing.T) {
	const text = `BRK-MIB DEFINITIONS ::= BEGIN
IMPORTS OBJECT-TYPE, enterprises FROM SNMPv2-SMI
    TEXTUAL-CONVENTION FROM SNMPv2-TC;
brk OBJECT IDENTIFIER ::= { enterprises 4242 }
BadTC ::= TEXTUAL-CONVENTION
    STATUS current
    DESCRIPTION "uses a type nobody defines"
    SYNTAX NoSuchType
GoodTC ::= TEXTUAL-CONVENTION
    STATUS current
    DESCRIPTION "fine, but defined after BadTC"
    SYNTAX INTEGER { a(1), b(2) }
brkGood OBJECT-TYPE SYNTAX GoodTC MAX-ACCESS read-only STATUS current DESCRIPTION "x" ::= { brk 1 }
brkBad OBJECT-TYPE SYNTAX BadTC MAX-ACCESS read-only STATUS current DESCRIPTION "x" ::= { brk 2 }
END
`
	dir := writeFiles(t, map[string]string{"brk.mib": text})
	r, err := load(t, dir)
	var fe *FileError
	if !errors.As(err, &fe) || fe.File != filepath.Join(dir, "brk.mib") || fe.Line != 13 ||
		!strings.Contains(err.Error(), "the syntax of brkGood, brkBad does not resolve") {
		t.Fatalf("Load = %v, want brk.mib line 13 naming brkGood and brkBad", err)
	}
	if oid, err := r.Resolve("brkGood.0"); err != nil || oid != "1.3.6.1.4.1.4242.1.0" {
		t.Errorf("brkGood.0 = %q, %v", oid, err)
	}
}

// TestUnchangedFilesAreNotParsedAgain: with a LoadCache, a load of files
// unchanged since the last returns the last Resolver and its errors (and
// counts them again); a changed, added or removed file is a new load.
func TestUnchangedFilesAreNotParsedAgain(t *testing.T) {
	dir := writeFiles(t, map[string]string{"acme.mib": acmeMIB, "broken.mib": "BROKEN DEFINITIONS ::= BEGIN x END"})
	reg := prometheus.NewPedanticRegistry()
	l := NewLoadCache(reg)
	opts := Options{Dirs: []string{dir}}
	first, err1 := Load(opts, nil, l)
	again, err2 := Load(opts, nil, l)
	if again != first || err1 == nil || err2 == nil || err1.Error() != err2.Error() {
		t.Errorf("unchanged: resolver %p then %p, errors %v then %v; want the same", first, again, err1, err2)
	}
	if got := testutil.ToFloat64(l.errors); got != 2 {
		t.Errorf("spoold_mib_file_errors_total = %v after two loads of one bad file, want 2", got)
	}
	for _, change := range []struct {
		what string
		do   func() error
		name string // resolves after the change
	}{
		{"changed", func() error {
			return os.WriteFile(filepath.Join(dir, "acme.mib"), []byte(strings.Replace(acmeMIB, "acmeLinkState", "acmeUplinkState", -1)), 0o644)
		}, "acmeUplinkState"},
		{"added", func() error { return os.WriteFile(filepath.Join(dir, "other.mib"), []byte(otherMIB), 0o644) }, "OTHER-VENDOR-MIB::acmeTemperature"},
		{"removed", func() error { return os.Remove(filepath.Join(dir, "broken.mib")) }, "acmeFanState"},
	} {
		if err := change.do(); err != nil {
			t.Fatal(err)
		}
		r, _ := Load(opts, nil, l)
		if r == first {
			t.Errorf("%s file: the last resolver again", change.what)
		}
		if _, err := r.Resolve(change.name); err != nil {
			t.Errorf("%s file: %v", change.what, err)
		}
		first = r
	}
	if _, err := Load(opts, nil, l); err != nil {
		t.Errorf("the broken file removed: %v", err)
	}
}

func TestUnreadableDirectoryIsAnError(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	_, err := load(t, missing)
	var fe *FileError
	if !errors.As(err, &fe) || fe.File != missing || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load = %v, want a FileError for %s", err, missing)
	}
}

// TestFirstDirectoryWins: a module in two directories is the first's,
// and an operator's copy of a carried base module replaces it.
func TestFirstDirectoryWins(t *testing.T) {
	moved := strings.Replace(acmeMIB, "{ enterprises 99999 }", "{ enterprises 12345 }", 1)
	first := writeFiles(t, map[string]string{"acme.mib": moved})
	second := writeFiles(t, map[string]string{"acme.mib": acmeMIB})
	r, err := load(t, first, second)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Resolve("acmeTemperature"); got != "1.3.6.1.4.1.12345.1.1" {
		t.Errorf("acmeTemperature = %s, want the first directory's", got)
	}
	smi, err := os.ReadFile("base/SNMPv2-SMI.txt")
	if err != nil {
		t.Fatal(err)
	}
	own := strings.Replace(string(smi), "enterprises    OBJECT IDENTIFIER ::= { private 1 }", "enterprises    OBJECT IDENTIFIER ::= { private 7 }", 1)
	r, err = load(t, writeFiles(t, map[string]string{"SNMPv2-SMI": own, "acme.mib": acmeMIB}))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Resolve("acmeTemperature"); got != "1.3.6.1.4.7.99999.1.1" {
		t.Errorf("acmeTemperature = %s, want it under the operator's enterprises", got)
	}
}

// TestNetSNMPMIBsMatchSnmptranslate loads net-snmp's own MIB files (the
// real ones Debian ships) through a MIB directory and checks every object
// gosmi found against snmptranslate reading the same files.
func TestNetSNMPMIBsMatchSnmptranslate(t *testing.T) {
	snmptranslate := testenv.LookPath(t, "snmptranslate", "the independent check of loaded MIBs")
	if _, err := os.Stat(filepath.Join(netsnmpMIBs, "UCD-SNMP-MIB.txt")); err != nil {
		testenv.Missing(t, "net-snmp's MIB files (Debian libsnmp-base): %v", err)
	}
	r, err := load(t, netsnmpMIBs)
	if err != nil {
		// Debian's copy lacks the IETF modules some of them import; every
		// file parses.
		t.Logf("loading %s: %v", netsnmpMIBs, err)
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			if !errors.Is(e, ErrMissingModule) {
				t.Errorf("not a missing import: %v", e)
			}
		}
	}
	base, _ := filepath.Abs("base")
	var modules []string
	for module, file := range r.Modules() {
		if filepath.Dir(file) == netsnmpMIBs {
			modules = append(modules, module)
		}
	}
	if len(modules) < 13 {
		t.Errorf("%d modules loaded from %s (%v), want all 13 Debian ships", len(modules), netsnmpMIBs, modules)
	}
	for _, module := range modules {
		tree, err := translateTree(snmptranslate, base+":"+netsnmpMIBs, module)
		if err != nil {
			t.Errorf("%s: %v", module, err)
			continue
		}
		n := 0
		for _, o := range r.byQualified {
			if o.Module != module {
				continue
			}
			n++
			if got := tree[o.Name]; got != o.OID {
				t.Errorf("%s: OID %s, snmptranslate %q", o.QualifiedName(), o.OID, got)
			}
		}
		if n < 3 {
			t.Errorf("%s: only %d objects loaded", module, n)
		}
	}
	// The loaded UCD-SNMP-MIB agrees with the built-in table.
	objs, _ := builtinObjects()
	for _, b := range objs {
		if b.Module != "UCD-SNMP-MIB" {
			continue
		}
		o := r.byQualified[b.QualifiedName()]
		if o == nil || o.OID != b.OID || o.Syntax != b.Syntax || o.Base != b.Base || o.Kind != b.Kind {
			t.Errorf("%s: loaded %+v, built in %+v", b.QualifiedName(), o, b)
		}
	}
}

func TestConcurrentLoads(t *testing.T) {
	dir := writeFiles(t, map[string]string{"acme.mib": acmeMIB, "other.mib": otherMIB})
	var wg sync.WaitGroup
	results := make([]*Resolver, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := Load(Options{Dirs: []string{dir}}, nil, nil)
			if err != nil {
				t.Error(err)
			}
			results[i] = r
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r == nil {
			continue
		}
		if got, err := r.Resolve("ACME-ROUTER-MIB::acmeFanState.1"); err != nil || got != "1.3.6.1.4.1.99999.1.2.1.3.1" {
			t.Errorf("load %d: %q, %v", i, got, err)
		}
		if r.Len() != results[0].Len() {
			t.Errorf("load %d: %d objects, load 0 %d", i, r.Len(), results[0].Len())
		}
	}
}

// TestLoadRefusesFilesThatAreNotRegular: a FIFO in a MIB directory hung
// the load (and so `spoold -t`, the start and every SIGHUP), a symlink to
// /dev/zero grew memory without bound. Each is refused at once, as is a
// file larger than the bound, with an error naming it; the other modules
// of the directory load.
func TestLoadRefusesFilesThatAreNotRegular(t *testing.T) {
	dir := writeFiles(t, map[string]string{"acme-router.my": acmeMIB})
	fifo := filepath.Join(dir, "fifo.my")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.my")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.my")
	if err := os.WriteFile(big, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, maxMIBFile+1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	type result struct {
		r   *Resolver
		err error
	}
	done := make(chan result, 1)
	go func() { r, err := load(t, dir); done <- result{r, err} }()
	var res result
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Load still reading after 10s: it blocks on a file of the MIB directory")
	}
	for _, tc := range []struct{ file, want string }{
		{fifo, "not a regular file but a FIFO"},
		{zero, "not a regular file but a device"},
		{big, fmt.Sprintf("larger than %d bytes", maxMIBFile)},
	} {
		if res.err == nil || !strings.Contains(res.err.Error(), "load MIB file "+tc.file+": ") || !strings.Contains(res.err.Error(), tc.want) {
			t.Errorf("Load error %v: want %s named with %q", res.err, tc.file, tc.want)
		}
	}
	if _, err := res.r.Resolve("acmeTemperature"); err != nil {
		t.Errorf("the directory's good module did not load beside the refused files: %v", err)
	}
}
