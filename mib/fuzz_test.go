package mib

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzResolve: Resolve never panics; what it returns is a numeric OID
// that ParseOID accepts as it is; a numeric OID resolves to itself
// (without its leading dot); and the name Name gives any result resolves
// back to it.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"1.3.6.1.2.1.1.3.0", ".1.3.6.1.2.1.31.1.1.1.6.3", "IF-MIB::ifHCInOctets.3",
		"ifHCInOctets", "sysUpTime.0", "IF-MIB::", "::x", "x.", "2.999", "1.3..6",
		"ifOperStatus.01", "SNMPv2-SMI::enterprises.9.1", "0.0", "hrStorageFixedDisk",
	} {
		f.Add(s)
	}
	r := Builtin()
	f.Fuzz(func(t *testing.T, name string) {
		oid, err := r.Resolve(name)
		numeric, numErr := ParseOID(name)
		if numErr == nil && (err != nil || oid != numeric) {
			t.Fatalf("numeric %q: Resolve = %q, %v; want %q", name, oid, err, numeric)
		}
		if err != nil {
			if oid != "" {
				t.Fatalf("Resolve(%q) = %q with error %v", name, oid, err)
			}
			return
		}
		if got, err := ParseOID(oid); err != nil || got != oid || strings.HasPrefix(oid, ".") {
			t.Fatalf("Resolve(%q) = %q: not a numeric OID: %v", name, oid, err)
		}
		back, err := r.Resolve(r.Name(oid))
		if err != nil || back != oid {
			t.Fatalf("Resolve(Name(%q)) = %q, %v (name %q)", oid, back, err, r.Name(oid))
		}
	})
}

// FuzzLoadMIB: a MIB file of any bytes never crashes Load; every error is
// a *FileError naming that file, and every object loaded has a numeric
// OID.
func FuzzLoadMIB(f *testing.F) {
	f.Add([]byte(acmeMIB))
	f.Add([]byte(otherMIB))
	f.Add([]byte(strings.Replace(acmeMIB, "}", "", 3)))
	f.Add([]byte("X DEFINITIONS ::= BEGIN x OBJECT IDENTIFIER ::= { y 1 } END"))
	f.Fuzz(func(t *testing.T, text []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "fuzz.mib")
		if err := os.WriteFile(path, text, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Load(Options{Dirs: []string{dir}}, nil, nil)
		if err != nil {
			for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
				var fe *FileError
				if !errors.As(e, &fe) || (fe.File != path && !strings.HasPrefix(fe.File, "base/")) {
					t.Fatalf("error %v: not a FileError of %s", e, path)
				}
			}
		}
		for _, o := range r.byQualified {
			if _, err := checkArcs(o.OID); err != nil {
				t.Fatalf("%s: OID %q: %v", o.QualifiedName(), o.OID, err)
			}
		}
	})
}
