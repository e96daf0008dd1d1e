package rrd

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// synthHeader builds an RRD header as librrd lays it out on a 64-bit
// platform (see header.go), independently of parseHeader's code.
func synthHeader(version string, step uint64, ds []DSInfo, rras int, last int64) []byte {
	ne := binary.NativeEndian
	b := make([]byte, 128+120*(len(ds)+rras)+16)
	copy(b, "RRD\x00")
	copy(b[4:], version+"\x00")
	ne.PutUint64(b[16:], math.Float64bits(8.642135e130))
	ne.PutUint64(b[24:], uint64(len(ds)))
	ne.PutUint64(b[32:], uint64(rras))
	ne.PutUint64(b[40:], step)
	for i, d := range ds {
		copy(b[128+120*i:], d.Name)
		copy(b[128+120*i+20:], d.Type)
	}
	for i := range rras {
		copy(b[128+120*(len(ds)+i):], "AVERAGE")
	}
	ne.PutUint64(b[128+120*(len(ds)+rras):], uint64(last))
	ne.PutUint64(b[128+120*(len(ds)+rras)+8:], 123456) // last_up_usec
	return b
}

func TestParseHeader(t *testing.T) {
	ds := []DSInfo{{"in", Counter}, {"out_1-x", Derive}, {"nineteen_chars_long", Gauge}}
	good := synthHeader("0003", 300, ds, 8, 1_700_000_000)
	want := FileInfo{Last: 1_700_000_000, LastMilli: 123, Step: 300 * time.Second, DS: ds}
	mutate := func(f func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		f(b)
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
		need int  // > len(b): more bytes needed
		bad  bool // ErrHeaderUnknown
	}{
		{"v3", good, len(good), false},
		{"v4", synthHeader("0004", 300, ds, 8, 1_700_000_000), len(good), false},
		{"v5", synthHeader("0005", 300, ds, 8, 1_700_000_000), len(good), false},
		{"empty", nil, 128, false},
		{"stat_head only", good[:128], len(good), false},
		{"ends in live_head", good[:len(good)-1], len(good), false},
		{"v2", synthHeader("0002", 300, ds, 8, 1), 0, true},
		{"v6", synthHeader("0006", 300, ds, 8, 1), 0, true},
		{"no cookie", mutate(func(b []byte) { b[0] = 'X' }), 0, true},
		{"other architecture", mutate(func(b []byte) { binary.NativeEndian.PutUint64(b[16:], math.Float64bits(1)) }), 0, true},
		{"no data sources", mutate(func(b []byte) { binary.NativeEndian.PutUint64(b[24:], 0) }), 0, true},
		{"huge rra_cnt", mutate(func(b []byte) { binary.NativeEndian.PutUint64(b[32:], math.MaxUint64) }), 0, true},
		{"zero step", mutate(func(b []byte) { binary.NativeEndian.PutUint64(b[40:], 0) }), 0, true},
		{"empty name", mutate(func(b []byte) { b[128] = 0 }), 0, true},
		{"unterminated name", mutate(func(b []byte) { copy(b[128:148], "twenty_chars_long_xx") }), 0, true},
		{"unterminated type", mutate(func(b []byte) { copy(b[148:168], "TWENTY_CHARS_LONG_XX") }), 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fi, need, err := parseHeader(tc.b)
			switch {
			case tc.bad:
				if !errors.Is(err, ErrHeaderUnknown) {
					t.Fatalf("err %v, want ErrHeaderUnknown", err)
				}
			case err != nil:
				t.Fatal(err)
			case need != tc.need:
				t.Fatalf("need %d, want %d", need, tc.need)
			case need <= len(tc.b) && !reflect.DeepEqual(fi, want):
				t.Fatalf("got %+v, want %+v", fi, want)
			}
		})
	}
}

// accepted says whether a header reader's result is a decoded header: an
// error must say the header is not recognized, and need > len(b) asks for
// more bytes.
func accepted(t *testing.T, b []byte, need int, err error) bool {
	t.Helper()
	if err != nil && !errors.Is(err, ErrHeaderUnknown) {
		t.Fatalf("error %v does not wrap ErrHeaderUnknown", err)
	}
	return err == nil && need <= len(b)
}

func FuzzParseHeader(f *testing.F) {
	f.Add(synthHeader("0003", 300, []DSInfo{{"c", Counter}, {"g", Gauge}}, 8, 1_700_000_000))
	f.Add(synthHeader("0005", 60, []DSInfo{{"x", "DCOUNTER"}}, 1, -1))
	f.Add([]byte("RRD\x000003\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fi, need, err := parseHeader(b)
		if !accepted(t, b, need, err) {
			return
		}
		if need != 128+120*len(fi.DS)+120*int(binary.NativeEndian.Uint64(b[32:]))+16 || len(fi.DS) == 0 || fi.Step < time.Second {
			t.Fatalf("need %d for %+v", need, fi)
		}
		for _, ds := range fi.DS {
			if ds.Name == "" || ds.Type == "" {
				t.Fatalf("empty name or type in %+v", fi)
			}
		}
	})
}

// TestInfoReadsTheHeaderInGo: LibRRD's Info reads a header the Go
// reader knows without calling librrd, so it works in a build without cgo
// too (this test runs in both; make check runs the package without cgo).
func TestInfoReadsTheHeaderInGo(t *testing.T) {
	ds := []DSInfo{{"in", Counter}, {"load", Gauge}}
	path := filepath.Join(t.TempDir(), "f.rrd")
	if err := os.WriteFile(path, synthHeader("0003", 300, ds, 2, 1_700_000_000), 0o640); err != nil {
		t.Fatal(err)
	}
	fi, err := pathInfo(path)
	if err != nil || fi.Last != 1_700_000_000 || fi.Step != 300*time.Second || !reflect.DeepEqual(fi.DS, ds) {
		t.Fatalf("Info = %+v, %v", fi, err)
	}
}
