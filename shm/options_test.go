package shm

import (
	"fmt"
	"strings"
	"testing"
)

func TestNewRejectsBadOptions(t *testing.T) {
	for _, tc := range []struct {
		shards   int
		maxBytes int64
		names    string
	}{
		{0, 1 << 20, "shards 0"},
		{-4, 1 << 20, "shards -4"},
		{3, 1 << 20, "shards 3"},
		{96, 1 << 20, "shards 96"},
		{MaxShards * 2, 1 << 20, fmt.Sprintf("shards %d", MaxShards*2)},
		{64, 0, "max bytes 0"},
		{64, -1, "max bytes -1"},
	} {
		t.Run(fmt.Sprintf("shards=%d,max=%d", tc.shards, tc.maxBytes), func(t *testing.T) {
			_, err := New(Options{Shards: tc.shards, MaxBytes: tc.maxBytes})
			if err == nil || !strings.Contains(err.Error(), tc.names) {
				t.Fatalf("New: error %v; want one naming %q", err, tc.names)
			}
		})
	}
}

func TestNewAcceptsPowersOfTwo(t *testing.T) {
	for _, shards := range []int{1, 2, 64, MaxShards} {
		t.Run(fmt.Sprint(shards), func(t *testing.T) {
			ix, err := New(Options{Shards: shards, MaxBytes: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			for h := range uint64(1000) {
				mustAdd(t, ix, h*0x9e3779b97f4a7c15, "", 1)
			}
			if st := ix.Stats(); st.Shards != shards || st.Keys != 1000 {
				t.Fatalf("Stats: %d shards, %d keys; want %d, 1000", st.Shards, st.Keys, shards)
			}
		})
	}
}

func TestDefaultOptions(t *testing.T) {
	o := DefaultOptions()
	if o.Shards != 64 || o.MaxBytes != 64<<20 || o.Now != nil {
		t.Fatalf("DefaultOptions() = %+v; want 64 shards, 64 MiB, real clock", o)
	}
	if _, err := New(o); err != nil {
		t.Fatal(err)
	}
}
