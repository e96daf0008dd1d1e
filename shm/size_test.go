package shm

import (
	"fmt"
	"math/big"
	"strings"
	"testing"
)

func TestParseSizeAccepts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"0", 0},
		{"1048576", 1 << 20},
		{"512k", 512 << 10},
		{"512K", 512 << 10},
		{"64m", 64 << 20},
		{"64M", 64 << 20},
		{"1g", 1 << 30},
		{"1G", 1 << 30},
		{"007k", 7 << 10},
		{"9223372036854775807", 1<<63 - 1},
		{"8589934591g", 8589934591 << 30},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSize(tc.in)
			if err != nil || got != tc.want {
				t.Fatalf("ParseSize(%q) = %d, %v; want %d, nil", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestParseSizeRejects(t *testing.T) {
	for _, in := range []string{
		"", "k", "m", "-1", "+1", " 1", "1 ", "1.5m", "1kb", "1KB", "1b", "1t", "0x10",
		"1mm", "64MiB", "9223372036854775808", "8589934592g", "9223372036854775807k",
	} {
		t.Run(fmt.Sprintf("%q", in), func(t *testing.T) {
			got, err := ParseSize(in)
			if err == nil {
				t.Fatalf("ParseSize(%q) = %d, nil; want an error", in, got)
			}
			if prefix := fmt.Sprintf("parse size %q: ", in); !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("error %q does not start with %q", err, prefix)
			}
		})
	}
}

// FuzzParseSize: --keys-zone accepts digits with an optional k, m or g and
// nothing else; an accepted size is non-negative, is the digits times the
// unit exactly, and never overflows.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"64m", "0", "512k", "1G", "9223372036854775807", "8589934592g", "-1", "1.5m", " 1m", "1mb", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err != nil {
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", s)) {
				t.Fatalf("error %q does not name the value", err)
			}
			return
		}
		digits, unit := s, int64(1)
		if k := strings.IndexAny(s, "kKmMgG"); k >= 0 {
			digits, unit = s[:k], map[byte]int64{'k': 1 << 10, 'm': 1 << 20, 'g': 1 << 30}[s[k]|0x20]
			if k != len(s)-1 {
				t.Fatalf("ParseSize(%q) accepted a unit before the end", s)
			}
		}
		var want big.Int
		want.SetString(digits, 10)
		want.Mul(&want, big.NewInt(unit))
		if n < 0 || !want.IsInt64() || want.Int64() != n {
			t.Fatalf("ParseSize(%q) = %d, want %s", s, n, want.String())
		}
	})
}
