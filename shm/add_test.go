package shm

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestAddIsIdempotent(t *testing.T) {
	for _, inFlight := range []bool{false, true} {
		for _, key := range []string{"", "router-1/ifTable"} {
			t.Run(fmt.Sprintf("inflight=%v,key=%q", inFlight, key), func(t *testing.T) {
				ix, _ := newTestIndex(t, 0)
				for _, ts := range []int64{300, 100, 200} {
					mustAdd(t, ix, 7, key, ts)
				}
				if inFlight {
					if _, ok := ix.TakeKey(7); !ok {
						t.Fatal("TakeKey: nothing taken")
					}
				}
				before := ix.Stats()
				for _, ts := range []int64{100, 200, 300} {
					if added, err := ix.Add(7, key, ts); added || err != nil {
						t.Fatalf("second Add(%d) = %v, %v; want false, nil", ts, added, err)
					}
				}
				after := ix.Stats()
				if after.Entries != 3 || after.Bytes != before.Bytes || after.Duplicates != 3 || after.Added != 3 {
					t.Fatalf("after duplicates: %d entries, %d bytes (was %d), %d duplicates, %d added; want 3, unchanged, 3, 3",
						after.Entries, after.Bytes, before.Bytes, after.Duplicates, after.Added)
				}
			})
		}
	}
}

func TestAddDuringFlightIsPending(t *testing.T) {
	ix, _ := newTestIndex(t, 0)
	mustAdd(t, ix, 7, "k", 100)
	b, _ := ix.TakeKey(7)
	mustAdd(t, ix, 7, "k", 50) // older than the batch, yet new
	mustAdd(t, ix, 7, "k", 200)
	if _, ok := ix.TakeKey(7); ok {
		t.Fatal("TakeKey while in flight: ok; want a single batch in flight per key")
	}
	ix.Done(7, b.Times, time.Time{})
	b, ok := ix.TakeKey(7)
	if !ok || !slices.Equal(b.Times, []int64{50, 200}) {
		t.Fatalf("TakeKey after Done = %v, %v; want [50 200], true", b.Times, ok)
	}
}

func TestKeyLearnedLater(t *testing.T) {
	for _, via := range []string{"Add", "Add-duplicate", "SetKey"} {
		t.Run(via, func(t *testing.T) {
			ix, _ := newTestIndex(t, 0)
			mustAdd(t, ix, 9, "", 100) // the loader: hash only
			bytesBefore := ix.Stats().Bytes
			var err error
			switch via {
			case "Add":
				_, err = ix.Add(9, "router-9/ifTable", 200)
			case "Add-duplicate":
				_, err = ix.Add(9, "router-9/ifTable", 100)
			case "SetKey":
				err = ix.SetKey(9, "router-9/ifTable")
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := ix.TakeKey(9)
			if b.Key != "router-9/ifTable" {
				t.Fatalf("batch key %q; want the learned one", b.Key)
			}
			wantBytes := bytesBefore + int64(len(b.Key))
			if via == "Add" {
				wantBytes += timeBytes
			}
			if got := ix.Stats().Bytes; got != wantBytes {
				t.Fatalf("Bytes = %d; want %d (the key's length is accounted)", got, wantBytes)
			}
			if err := ix.SetKey(9, "router-9/ifTable"); err != nil {
				t.Fatalf("SetKey of the same key: %v", err)
			}
		})
	}
}

func TestSetKeyOfAbsentHashIsNoop(t *testing.T) {
	ix, _ := newTestIndex(t, 0)
	if err := ix.SetKey(1, "k"); err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Keys != 0 || st.Bytes != 0 {
		t.Fatalf("SetKey of an absent hash: %d keys, %d bytes; want none", st.Keys, st.Bytes)
	}
}

func TestCollision(t *testing.T) {
	for _, via := range []string{"Add", "SetKey"} {
		t.Run(via, func(t *testing.T) {
			ix, _ := newTestIndex(t, 0)
			mustAdd(t, ix, 5, "router-a/ifTable", 100)
			before := ix.Stats()
			var err error
			if via == "Add" {
				var added bool
				added, err = ix.Add(5, "router-b/ifTable", 200)
				if added {
					t.Error("Add with a colliding key reported added")
				}
			} else {
				err = ix.SetKey(5, "router-b/ifTable")
			}
			if !errors.Is(err, ErrCollision) {
				t.Fatalf("error %v; want ErrCollision", err)
			}
			after := ix.Stats()
			if after.Collisions != 1 || after.Entries != before.Entries || after.Bytes != before.Bytes {
				t.Fatalf("after collision: %d collisions, %d entries, %d bytes; want 1, %d, %d",
					after.Collisions, after.Entries, after.Bytes, before.Entries, before.Bytes)
			}
			if b, _ := ix.TakeKey(5); b.Key != "router-a/ifTable" || !slices.Equal(b.Times, []int64{100}) {
				t.Fatalf("batch %+v; want the first key's, unchanged", b)
			}
		})
	}
}

func TestFullRefusesWithoutEvicting(t *testing.T) {
	const key = "router-1/ifTable"
	first := keyOverhead + int64(len(key)) + timeBytes
	for _, tc := range []struct {
		name     string
		maxBytes int64
		refused  func(ix *Index) (bool, error)
	}{
		{"new-key", first + keyOverhead, func(ix *Index) (bool, error) { return ix.Add(2, "", 100) }},
		{"new-time", first + timeBytes - 1, func(ix *Index) (bool, error) { return ix.Add(1, key, 200) }},
		{"new-time-and-key", first, func(ix *Index) (bool, error) { return ix.Add(3, "x", 100) }},
	} {
		t.Run(fmt.Sprintf("%s,max=%d", tc.name, tc.maxBytes), func(t *testing.T) {
			ix, _ := newTestIndex(t, tc.maxBytes)
			mustAdd(t, ix, 1, key, 100)
			if ix.Overflowed() {
				t.Fatal("Overflowed before any refusal")
			}
			before := ix.Stats()
			added, err := tc.refused(ix)
			if added || !errors.Is(err, ErrFull) {
				t.Fatalf("Add = %v, %v; want false, ErrFull", added, err)
			}
			after := ix.Stats()
			if after.Entries != 1 || after.Keys != 1 || after.Bytes != before.Bytes || after.Full != 1 {
				t.Fatalf("after refusal: %d entries, %d keys, %d bytes, %d full; want 1, 1, %d, 1",
					after.Entries, after.Keys, after.Bytes, before.Bytes, after.Full)
			}
			if !ix.Overflowed() {
				t.Fatal("Overflowed = false after ErrFull")
			}
			ix.ClearOverflow()
			if ix.Overflowed() {
				t.Fatal("Overflowed = true after ClearOverflow")
			}
			ix.BeginWalk() // a walk finds the refused entry on disk
			ix.EndWalk()
			if b, _ := ix.TakeKey(1); !slices.Equal(b.Times, []int64{100}) {
				t.Fatalf("first entry %v; want [100] (nothing evicted)", b.Times)
			}
		})
	}
}

func TestFullIsExact(t *testing.T) {
	// Capacity for exactly one key of n times: the n-th Add fits, the next does not.
	const n = 5
	ix, _ := newTestIndex(t, keyOverhead+n*timeBytes)
	for ts := range int64(n) {
		mustAdd(t, ix, 1, "", ts)
	}
	if _, err := ix.Add(1, "", n); !errors.Is(err, ErrFull) {
		t.Fatalf("Add beyond capacity: %v; want ErrFull", err)
	}
	if st := ix.Stats(); st.Bytes != st.MaxBytes {
		t.Fatalf("Bytes = %d; want exactly MaxBytes %d", st.Bytes, st.MaxBytes)
	}
	ix.BeginWalk()
	ix.EndWalk()
	b, _ := ix.TakeKey(1)
	ix.Done(1, b.Times, time.Time{})
	mustAdd(t, ix, 1, "", n) // freed bytes are usable again
}

func TestSetKeyFull(t *testing.T) {
	ix, _ := newTestIndex(t, keyOverhead+timeBytes+3)
	mustAdd(t, ix, 1, "", 100)
	if err := ix.SetKey(1, "long-key"); !errors.Is(err, ErrFull) {
		t.Fatalf("SetKey beyond capacity: %v; want ErrFull", err)
	}
	if err := ix.SetKey(1, "abc"); err != nil {
		t.Fatalf("SetKey that fits exactly: %v", err)
	}
}

func TestAddExistingKeyDoesNotAllocate(t *testing.T) {
	for _, key := range []string{"", "router-00042/ifTable"} {
		for _, inFlight := range []bool{false, true} {
			t.Run(fmt.Sprintf("key=%q,inflight=%v", key, inFlight), func(t *testing.T) {
				ix, _ := newTestIndex(t, 0)
				const h = 0xc29
				last := int64(0)
				addEven := func(n int) { // 257 appends leave a pending cap of 512
					for range n {
						last += 2
						mustAdd(t, ix, h, key, last)
					}
				}
				addEven(257)
				if inFlight {
					ix.TakeKey(h)
					addEven(257)
				}
				i := int64(0)
				add := func() {
					i++
					ts := last
					switch i % 3 {
					case 0: // append at the end
						last += 2
						ts = last
					case 1: // insert before the end: odd times are new
						ts = 2*i + 1
					case 2: // a duplicate, pending or in flight
						ts = 2 * i
					}
					if _, err := ix.Add(h, key, ts); err != nil {
						t.Fatal(err)
					}
				}
				// AllocsPerRun divides in integers, so measure one run at a time.
				for range 100 {
					if allocs := testing.AllocsPerRun(1, add); allocs != 0 {
						t.Fatalf("Add #%d of an existing key: %v allocations; want 0", i, allocs)
					}
				}
				if st := ix.Stats(); st.Duplicates < 60 || st.Added < uint64(last/2)+60 {
					t.Fatalf("the test did not exercise duplicates and inserts: %+v", st)
				}
			})
		}
	}
}

// TestRefusedKeyIsHeldUntilAWalk: when the full index refuses an entry,
// no time of its key from it on is handed out by any take, and those
// already pending leave the index (they are on disk) to free the room;
// newer Adds of the key are refused until a walk begins; the walk's Adds
// are taken only once it has ended. So a key's newer entries are never
// written before a refused older one. Other keys go on.
func TestRefusedKeyIsHeldUntilAWalk(t *testing.T) {
	ix, _ := newTestIndex(t, 2*keyOverhead+3*timeBytes)
	mustAdd(t, ix, 1, "", 200) // key 1, a newer entry
	mustAdd(t, ix, 2, "", 100) // key 2
	mustAdd(t, ix, 2, "", 101)
	if _, err := ix.Add(1, "", 100); !errors.Is(err, ErrFull) { // key 1's older entry
		t.Fatalf("Add: %v, want ErrFull", err)
	}
	if st := ix.Stats(); st.Held != 1 || st.Keys != 1 || st.Entries != 2 || st.Bytes != keyOverhead+2*timeBytes {
		t.Fatalf("after the refusal: %+v; want key 1 held and its time 200 out of the index", st)
	}
	if _, err := ix.Add(1, "", 300); !errors.Is(err, ErrFull) { // a new poll of key 1, room or not
		t.Fatalf("Add of a newer time of a held key: %v, want ErrFull", err)
	}
	takes := func() map[uint64][]int64 {
		got := map[uint64][]int64{}
		for _, b := range ix.TakeAll(nil) {
			got[b.Hash] = b.Times
			ix.Done(b.Hash, nil, time.Time{})
		}
		due := ix.TakeDue(time.Now().Add(time.Hour), func(uint64, time.Time) time.Time { return time.Time{} }, 10, nil)
		for _, b := range due {
			ix.Done(b.Hash, nil, time.Time{})
		}
		if len(due) != len(got) {
			t.Fatalf("TakeDue took %d batches, TakeAll %v", len(due), got)
		}
		if b, ok := ix.TakeKey(1); ok {
			got[1] = b.Times
			ix.Done(1, nil, time.Time{})
		}
		return got
	}
	if got := takes(); len(got) != 1 || got[2] == nil {
		t.Fatalf("taken %v while key 1 is held, want key 2 only", got)
	}
	// A walk indexes the refused entry; the index fills again at 200.
	ix.BeginWalk()
	mustAdd(t, ix, 1, "", 100)
	if _, err := ix.Add(1, "", 200); !errors.Is(err, ErrFull) {
		t.Fatalf("Add in the walk: %v, want ErrFull", err)
	}
	if got := takes(); got[1] != nil {
		t.Fatalf("key 1 taken during the walk: %v", got[1])
	}
	ix.EndWalk()
	if got := takes(); !slices.Equal(got[1], []int64{100}) {
		t.Fatalf("after the walk: key 1 %v, want [100] (200 is refused, on disk)", got[1])
	}
	// Everything written; the next walk indexes 200 and 300 and releases key 1.
	for _, h := range []uint64{1, 2} {
		b, _ := ix.TakeKey(h)
		ix.Done(h, b.Times, time.Time{})
	}
	ix.BeginWalk()
	mustAdd(t, ix, 1, "", 200)
	mustAdd(t, ix, 1, "", 300)
	ix.EndWalk()
	if b, ok := ix.TakeKey(1); !ok || !slices.Equal(b.Times, []int64{200, 300}) {
		t.Fatalf("after the second walk: %v %v, want [200 300]", ok, b.Times)
	}
	if st := ix.Stats(); st.Held != 0 {
		t.Fatalf("Held = %d after a walk without refusals, want 0", st.Held)
	}
}
