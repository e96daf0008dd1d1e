package spool

import (
	"errors"
	"testing"
)

func TestParseName(t *testing.T) {
	good := []struct {
		name string
		ref  Ref
	}{
		{"b7f54b2df7773722-1700000000", Ref{0xb7f54b2df7773722, 1700000000}},
		{"0000000000000000-0", Ref{0, 0}},
		{"ffffffffffffffff-9223372036854775807", Ref{^uint64(0), 1<<63 - 1}},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseName(tc.name)
			if err != nil || r != tc.ref {
				t.Fatalf("ParseName = %v, %v; want %v", r, err, tc.ref)
			}
			if r.String() != tc.name {
				t.Fatalf("String = %q, want %q", r.String(), tc.name)
			}
		})
	}
	bad := []string{
		"", "lock", "b7f54b2df7773722", "b7f54b2df7773722-", "b7f54b2df777372-1700000000",
		"B7F54B2DF7773722-1700000000", "b7f54b2df7773722_1700000000", "b7f54b2df7773722-01700000000",
		"b7f54b2df7773722--1", "b7f54b2df7773722-17000000x0", "b7f54b2df7773722-9223372036854775808",
		"b7f54b2df7773722-1700000000.tmp", "zzf54b2df7773722-1700000000",
	}
	for _, name := range bad {
		t.Run("bad/"+name, func(t *testing.T) {
			if r, err := ParseName(name); !errors.Is(err, ErrBadName) {
				t.Fatalf("ParseName(%q) = %v, %v; want ErrBadName", name, r, err)
			}
			if _, ok := ParseNameBytes([]byte(name)); ok {
				t.Fatalf("ParseNameBytes(%q) accepted", name)
			}
		})
	}
}

func TestParseNameBytesDoesNotAllocate(t *testing.T) {
	name := []byte("b7f54b2df7773722-1700000000")
	if n := testing.AllocsPerRun(100, func() { ParseNameBytes(name) }); n != 0 {
		t.Fatalf("ParseNameBytes allocates %v times", n)
	}
}

func FuzzParseName(f *testing.F) {
	for _, s := range []string{"b7f54b2df7773722-1700000000", "0000000000000000-0", "x", "ffffffffffffffff-99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		r, err := ParseName(name)
		if err != nil {
			return
		}
		// Whatever parses is canonical: it formats back to the same name.
		if r.String() != name {
			t.Fatalf("ParseName(%q) = %v, which formats as %q", name, r, r.String())
		}
	})
}
