package shm

import (
	"fmt"
	"testing"
	"time"
	"unsafe"
)

// TestByteAccounting pins the prices documented on Stats.Bytes.
func TestByteAccounting(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) == 8 && keyOverhead != 120 {
		t.Fatalf("keyOverhead = %d; Stats.Bytes documents 120", keyOverhead)
	}
	ix, _ := newTestIndex(t, 0)
	mustAdd(t, ix, 1, "", 1)
	mustAdd(t, ix, 1, "", 2)
	mustAdd(t, ix, 2, "router-2", 1)
	want := 2*keyOverhead + int64(len("router-2")) + 3*timeBytes
	if got := ix.Stats().Bytes; got != want {
		t.Fatalf("Bytes = %d; want %d", got, want)
	}
}

// TestStatsConsistency drives an index through adds, takes and dones and
// checks after each step that Stats agree with an independent count.
func TestStatsConsistency(t *testing.T) {
	for _, shards := range []int{1, 8} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			c := newFakeClock()
			ix, err := New(Options{Shards: shards, MaxBytes: 1 << 20, Now: c.Now})
			if err != nil {
				t.Fatal(err)
			}
			model := map[uint64]map[int64]bool{} // hash -> time -> in flight
			keyLen := map[uint64]int{}
			check := func(step string) {
				t.Helper()
				var want Stats
				for h, times := range model {
					want.Keys++
					want.Bytes += keyOverhead + int64(keyLen[h]) + int64(len(times))*timeBytes
					for _, f := range times {
						want.Entries++
						if f {
							want.InFlight++
						}
					}
				}
				got := ix.Stats()
				if got.Keys != want.Keys || got.Entries != want.Entries || got.InFlight != want.InFlight || got.Bytes != want.Bytes {
					t.Fatalf("%s: keys/entries/inflight/bytes = %d/%d/%d/%d; want %d/%d/%d/%d", step,
						got.Keys, got.Entries, got.InFlight, got.Bytes, want.Keys, want.Entries, want.InFlight, want.Bytes)
				}
				if ix.Len() != want.Entries {
					t.Fatalf("%s: Len() = %d; want %d", step, ix.Len(), want.Entries)
				}
				if got.Added != got.Applied+uint64(got.Entries) {
					t.Fatalf("%s: Added %d != Applied %d + Entries %d", step, got.Added, got.Applied, got.Entries)
				}
				if (got.Entries == 0) != got.OldestPending.IsZero() {
					t.Fatalf("%s: OldestPending %v with %d entries", step, got.OldestPending, got.Entries)
				}
			}
			for h := range uint64(50) {
				key := ""
				if h%2 == 0 {
					key = fmt.Sprintf("router-%05d/ifTable", h)
					keyLen[h] = len(key)
				}
				model[h] = map[int64]bool{}
				for ts := range int64(h%7 + 1) {
					mustAdd(t, ix, h, key, ts)
					model[h][ts] = false
				}
				c.Advance(time.Second)
			}
			check("after adds")
			if got := ix.Stats().OldestPending; !got.Equal(time.Unix(0, 0)) {
				t.Fatalf("OldestPending = %v; want the oldest poll time, 0", got)
			}
			batches := ix.TakeDue(c.Now(), noDue, 30, nil)
			for _, b := range batches {
				for _, ts := range b.Times {
					model[b.Hash][ts] = true
				}
			}
			check("after TakeDue")
			for i, b := range batches {
				applied := b.Times[:i%len(b.Times)] // apply a prefix, requeue the rest
				for _, ts := range applied {
					delete(model[b.Hash], ts)
				}
				for ts := range model[b.Hash] {
					model[b.Hash][ts] = false
				}
				if len(model[b.Hash]) == 0 {
					delete(model, b.Hash)
				}
				ix.Done(b.Hash, applied, time.Time{})
			}
			check("after Done")
			for _, b := range ix.TakeAll(nil) {
				ix.Done(b.Hash, b.Times, time.Time{})
			}
			model = map[uint64]map[int64]bool{}
			check("after draining")
		})
	}
}
