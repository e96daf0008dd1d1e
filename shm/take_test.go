package shm

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// hashes returns batch hashes in ascending order.
func hashes(bs []Batch) []uint64 {
	hs := make([]uint64, len(bs))
	for i, b := range bs {
		hs[i] = b.Hash
	}
	slices.Sort(hs)
	return hs
}

func TestTakeDueRespectsDue(t *testing.T) {
	const delay = 10 * time.Minute
	// Key h was polled h minutes after the start (its oldest time); it is
	// due delay after that poll, whenever it was added.
	dueAfterDelay := func(_ uint64, since time.Time) time.Time { return since.Add(delay) }
	for _, tc := range []struct {
		at   time.Duration // when TakeDue runs, after the start
		want []uint64
	}{
		{0, nil},
		{delay - time.Nanosecond, nil},
		{delay, []uint64{0}},
		{delay + 2*time.Minute, []uint64{0, 1, 2}},
		{time.Hour, []uint64{0, 1, 2, 3}},
	} {
		t.Run(fmt.Sprintf("at=%v", tc.at), func(t *testing.T) {
			ix, c := newTestIndex(t, 0)
			start := c.Now().Unix()
			for h := range uint64(4) {
				polled := start + 60*int64(h)
				mustAdd(t, ix, h, "", polled+30)
				mustAdd(t, ix, h, "", polled) // an older time moves since back
				mustAdd(t, ix, h, "", polled+60)
			}
			c.Advance(time.Hour) // when they were added does not matter
			got := ix.TakeDue(at(tc.at), dueAfterDelay, 10, nil)
			if !slices.Equal(hashes(got), tc.want) {
				t.Fatalf("TakeDue took %v; want %v", hashes(got), tc.want)
			}
			for _, b := range got {
				polled := start + 60*int64(b.Hash)
				if !slices.Equal(b.Times, []int64{polled, polled + 30, polled + 60}) {
					t.Errorf("batch %+v; want times from %d", b, polled)
				}
			}
			if st := ix.Stats(); st.InFlight != 3*len(tc.want) || st.Taken != uint64(3*len(tc.want)) {
				t.Fatalf("InFlight %d, Taken %d; want %d", st.InFlight, st.Taken, 3*len(tc.want))
			}
		})
	}
}

func TestTakeDueLimitAndAppend(t *testing.T) {
	for _, max := range []int{0, 1, 3, 10} {
		t.Run(fmt.Sprintf("max=%d", max), func(t *testing.T) {
			ix, c := newTestIndex(t, 0)
			for h := range uint64(5) {
				mustAdd(t, ix, h, "", 1)
			}
			dst := []Batch{{Hash: 99}}
			got := ix.TakeDue(c.Now(), noDue, max, dst)
			want := min(max, 5)
			if len(got) != 1+want || got[0].Hash != 99 {
				t.Fatalf("TakeDue appended %d batches to dst; want %d after the existing one", len(got)-1, want)
			}
			rest := ix.TakeDue(c.Now(), noDue, 10, nil)
			if len(rest) != 5-want {
				t.Fatalf("second TakeDue took %d; want the %d left", len(rest), 5-want)
			}
		})
	}
}

func TestTakeDueSkipsInFlightAndBackoff(t *testing.T) {
	ix, c := newTestIndex(t, 0)
	for h := range uint64(3) {
		mustAdd(t, ix, h, "", 100)
	}
	// Key 0 is in flight; key 1 failed and backs off for a minute.
	if _, ok := ix.TakeKey(0); !ok {
		t.Fatal("TakeKey(0) failed")
	}
	mustAdd(t, ix, 0, "", 200) // pending, but its key is in flight
	b1, _ := ix.TakeKey(1)
	ix.Done(1, nil, at(time.Minute))
	if st := ix.Stats(); st.Backoff != 1 {
		t.Fatalf("Backoff = %d; want 1", st.Backoff)
	}
	if got := hashes(ix.TakeDue(c.Now(), noDue, 10, nil)); !slices.Equal(got, []uint64{2}) {
		t.Fatalf("TakeDue took %v; want [2] (0 in flight, 1 backing off)", got)
	}
	if got := ix.TakeDue(at(time.Minute-1), noDue, 10, nil); len(got) != 0 {
		t.Fatalf("TakeDue before retry time took %v", hashes(got))
	}
	got := ix.TakeDue(at(time.Minute), noDue, 10, nil)
	if len(got) != 1 || got[0].Hash != 1 || !slices.Equal(got[0].Times, b1.Times) {
		t.Fatalf("TakeDue at retry time took %+v; want key 1 with %v", got, b1.Times)
	}
	if st := ix.Stats(); st.Backoff != 0 {
		t.Fatalf("Backoff = %d after the retry was taken; want 0", st.Backoff)
	}
}

func TestTakeKey(t *testing.T) {
	ix, _ := newTestIndex(t, 0)
	mustAdd(t, ix, 1, "k", 300)
	mustAdd(t, ix, 1, "k", 100)
	ix.TakeKey(1)
	ix.Done(1, nil, at(time.Hour)) // backing off: TakeKey ignores it
	for _, tc := range []struct {
		hash uint64
		ok   bool
	}{
		{2, false}, // absent
		{1, true},
		{1, false}, // in flight
	} {
		b, ok := ix.TakeKey(tc.hash)
		if ok != tc.ok {
			t.Fatalf("TakeKey(%d) ok = %v; want %v", tc.hash, ok, tc.ok)
		}
		if ok && (b.Key != "k" || !slices.Equal(b.Times, []int64{100, 300})) {
			t.Fatalf("TakeKey(%d) = %+v; want key k, times [100 300]", tc.hash, b)
		}
	}
}

func TestTakeAll(t *testing.T) {
	ix, _ := newTestIndex(t, 0)
	for h := range uint64(20) {
		for ts := range int64(h + 1) {
			mustAdd(t, ix, h, "", 1000-ts)
		}
	}
	ix.TakeKey(3) // in flight: not taken again
	ix.TakeKey(4) // backing off: taken anyway
	ix.Done(4, nil, at(24*time.Hour))
	got := ix.TakeAll(nil)
	if len(got) != 19 {
		t.Fatalf("TakeAll took %d batches; want 19", len(got))
	}
	for _, b := range got {
		if b.Hash == 3 || len(b.Times) != int(b.Hash)+1 || !slices.IsSorted(b.Times) {
			t.Fatalf("batch %+v: want every key but 3 with all its times ascending", b)
		}
	}
	if more := ix.TakeAll(nil); len(more) != 0 {
		t.Fatalf("second TakeAll took %d; want 0", len(more))
	}
}

func TestBatchTimesAreTheCallers(t *testing.T) {
	ix, c := newTestIndex(t, 0)
	for h := range uint64(3) {
		mustAdd(t, ix, h, "", 1)
		mustAdd(t, ix, h, "", 2)
	}
	bs := ix.TakeDue(c.Now(), noDue, 10, nil)
	bs[0].Times[0] = -5
	_ = append(bs[0].Times, 77) // must not reach the next batch's times
	for _, b := range bs[1:] {
		if !slices.Equal(b.Times, []int64{1, 2}) {
			t.Fatalf("batch %d times %v; another batch's writes leaked in", b.Hash, b.Times)
		}
	}
	ix.Done(bs[0].Hash, nil, time.Time{})
	if b, _ := ix.TakeKey(bs[0].Hash); !slices.Equal(b.Times, []int64{1, 2}) {
		t.Fatalf("requeued times %v; want [1 2] (the caller's writes do not reach the index)", b.Times)
	}
}

func TestDone(t *testing.T) {
	for _, tc := range []struct {
		applied     []int64
		addedDuring []int64
		wantPending []int64 // nil: the key is removed
	}{
		{[]int64{10, 20, 30}, nil, nil},
		{[]int64{30, 10, 20, 20}, nil, nil}, // any order, duplicates
		{[]int64{10, 30}, nil, []int64{20}},
		{nil, nil, []int64{10, 20, 30}},
		{[]int64{5, 25}, nil, []int64{10, 20, 30}}, // not in flight: ignored
		{[]int64{10, 20, 30}, []int64{40, 15}, []int64{15, 40}},
		{[]int64{20}, []int64{40, 15}, []int64{10, 15, 30, 40}},
	} {
		t.Run(fmt.Sprintf("applied=%v,during=%v", tc.applied, tc.addedDuring), func(t *testing.T) {
			ix, c := newTestIndex(t, 0)
			for _, ts := range []int64{10, 20, 30} {
				mustAdd(t, ix, 1, "k", ts)
			}
			ix.TakeKey(1)
			c.Advance(time.Minute)
			for _, ts := range tc.addedDuring {
				mustAdd(t, ix, 1, "k", ts)
			}
			ix.Done(1, tc.applied, time.Time{})
			st := ix.Stats()
			if st.InFlight != 0 || st.Entries != len(tc.wantPending) {
				t.Fatalf("after Done: %d in flight, %d entries; want 0, %d", st.InFlight, st.Entries, len(tc.wantPending))
			}
			requeued := len(tc.wantPending) - len(tc.addedDuring)
			if st.Applied != uint64(3-requeued) || st.Requeued != uint64(requeued) {
				t.Fatalf("Applied %d, Requeued %d; want %d, %d", st.Applied, st.Requeued, 3-requeued, requeued)
			}
			b, ok := ix.TakeKey(1)
			if tc.wantPending == nil {
				if ok || st.Keys != 0 || st.Bytes != 0 {
					t.Fatalf("key left with %v, %d keys, %d bytes; want it removed and its bytes freed", b.Times, st.Keys, st.Bytes)
				}
				return
			}
			if !slices.Equal(b.Times, tc.wantPending) {
				t.Fatalf("pending %v; want %v", b.Times, tc.wantPending)
			}
		})
	}
}

func TestDoneWithoutFlightIsIgnored(t *testing.T) {
	ix, _ := newTestIndex(t, 0)
	mustAdd(t, ix, 1, "", 10)
	ix.Done(1, []int64{10}, time.Time{})
	ix.Done(2, []int64{10}, time.Time{})
	if st := ix.Stats(); st.Entries != 1 || st.Applied != 0 {
		t.Fatalf("Done without a batch in flight changed the index: %+v", st)
	}
}

func TestTakeDueIsRoundRobin(t *testing.T) {
	for _, shards := range []int{1, 4} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			c := newFakeClock()
			ix, err := New(Options{Shards: shards, MaxBytes: 1 << 20, Now: c.Now})
			if err != nil {
				t.Fatal(err)
			}
			const keys = 6
			for h := range uint64(keys) {
				mustAdd(t, ix, h, "", 1)
			}
			// A writer that takes one key at a time, while every key it writes
			// gets a new entry at once: each key must still get its turn
			// (round robin over shards, and over keys within a shard).
			seen := map[uint64]int{}
			for i := range int64(keys * shards) {
				bs := ix.TakeDue(c.Now(), noDue, 1, nil)
				if len(bs) != 1 {
					t.Fatalf("TakeDue #%d took %d batches; want 1", i, len(bs))
				}
				seen[bs[0].Hash]++
				ix.Done(bs[0].Hash, bs[0].Times, time.Time{})
				mustAdd(t, ix, bs[0].Hash, "", 2+i)
			}
			if len(seen) != keys {
				t.Fatalf("%d takes of one key served %v; want all %d keys", keys*shards, seen, keys)
			}
		})
	}
}

// TestTakeDueVisitsOnlyShardsThatMayBeDue: once a TakeDue has seen every
// key of a shard and none due, the next ones do not ask the due policy
// about those keys again until the earliest of them is due; whatever makes
// a key due sooner (a new key, an older time, a batch handed back) is seen
// at the next TakeDue; and the shard of a key not ready (a reason outside
// the index) is asked at every TakeDue, so it is taken as soon as it is.
func TestTakeDueVisitsOnlyShardsThatMayBeDue(t *testing.T) {
	const delay = 10 * time.Minute
	ix, c := newTestIndex(t, 0)
	start := c.Now().Unix()
	const keys = 1000
	for h := range uint64(keys) {
		mustAdd(t, ix, h, "", start)
	}
	asked := 0
	notReady := map[uint64]bool{3: true}
	due := func(h uint64, since time.Time) time.Time {
		asked++
		if notReady[h] {
			return NotReady
		}
		return since.Add(delay)
	}
	take := func(d time.Duration) []uint64 {
		t.Helper()
		asked = 0
		return hashes(ix.TakeDue(at(d), due, keys, nil))
	}
	perShard := keys / len(ix.shards)
	if got := take(time.Minute); len(got) != 0 || asked != keys {
		t.Fatalf("first TakeDue took %v and asked %d times; want none taken, %d asked", got, asked, keys)
	}
	if got := take(2 * time.Minute); len(got) != 0 || asked == 0 || asked > 3*perShard {
		t.Fatalf("second TakeDue took %v and asked %d times; want none taken, only the shard of the key not ready asked (about %d)", got, asked, perShard)
	}

	// A new key, and an older time of a key already pending, are due sooner.
	mustAdd(t, ix, keys, "", start-int64(delay/time.Second)) // due now
	mustAdd(t, ix, 7, "", start-int64(delay/time.Second))    // older than its time: due now
	if got := take(3 * time.Minute); !slices.Equal(got, []uint64{7, keys}) {
		t.Fatalf("after two older times TakeDue took %v; want [7 %d]", got, keys)
	}
	if asked > 3*3*perShard {
		t.Fatalf("TakeDue asked about %d keys; want only those of the 3 shards changed (about %d each)", asked, perShard)
	}

	// A batch handed back (with or without a backoff) is due again.
	ix.Done(7, nil, at(4*time.Minute))
	ix.Done(keys, nil, time.Time{})
	if got := take(3*time.Minute + time.Second); !slices.Equal(got, []uint64{keys}) {
		t.Fatalf("after two batches handed back TakeDue took %v; want [%d] (7 backs off until 4m)", got, keys)
	}
	if got := take(4 * time.Minute); !slices.Equal(got, []uint64{7}) {
		t.Fatalf("at the end of the backoff TakeDue took %v; want [7]", got)
	}

	// Every key is due at the delay, shards asleep or not; the key not
	// ready once it is.
	if got := take(delay); len(got) != keys-2 || slices.Contains(got, 3) {
		t.Fatalf("at the delay TakeDue took %d keys; want %d, without the key not ready", len(got), keys-2)
	}
	notReady[3] = false
	if got := take(delay + time.Second); !slices.Equal(got, []uint64{3}) {
		t.Fatalf("once ready TakeDue took %v; want [3]", got)
	}
}

// TestMinDelayKeepsShardsAsleepForNewTimes: with Options.MinDelay (the
// writer's delay), a time added after a shard's visit wakes the shard only
// when that time may be due, so a fleet whose keys are polled anew all the
// time does not have TakeDue ask the due policy about every key of a shard
// after each new time; a time old enough to be due (a backlog) or handed
// back by Done still is taken at once, and every key at its delay.
func TestMinDelayKeepsShardsAsleepForNewTimes(t *testing.T) {
	const delay = 90 * time.Second
	c := newFakeClock()
	o := DefaultOptions()
	o.Shards, o.Now, o.MinDelay = 4, c.Now, delay
	ix, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	start := c.Now().Unix()
	const keys = 1000
	for h := range uint64(keys) {
		mustAdd(t, ix, h, "", start)
	}
	asked := 0
	due := func(h uint64, since time.Time) time.Time { asked++; return since.Add(delay) }
	take := func(d time.Duration) []uint64 {
		t.Helper()
		asked = 0
		return hashes(ix.TakeDue(at(d), due, keys, nil))
	}
	if got := take(30 * time.Second); len(got) != 0 || asked != keys {
		t.Fatalf("first TakeDue took %v and asked %d times; want none taken, %d asked", got, asked, keys)
	}
	// The next cycle's polls: new keys, in every shard.
	for h := uint64(keys); h < keys+8; h++ {
		mustAdd(t, ix, h, "", start+30)
	}
	if got := take(31 * time.Second); len(got) != 0 || asked != 0 {
		t.Fatalf("after new times TakeDue took %v and asked %d times; want none taken, none asked (due at %v at the earliest)", got, asked, 30*time.Second+delay)
	}
	// A backlog's time is due at once, and so is a batch handed back. The
	// shard it wakes asks the policy only about the keys whose due time it
	// does not know yet: that one, and the new times' keys in the shard.
	mustAdd(t, ix, keys+8, "", start-int64(delay/time.Second))
	if got := take(32 * time.Second); !slices.Equal(got, []uint64{keys + 8}) || asked > 1+8 {
		t.Fatalf("after an old time TakeDue took %v and asked %d times; want [%d], at most 9 asked", got, asked, keys+8)
	}
	ix.Done(keys+8, nil, time.Time{})
	if got := take(33 * time.Second); !slices.Equal(got, []uint64{keys + 8}) {
		t.Fatalf("after a batch handed back TakeDue took %v; want [%d]", got, keys+8)
	}
	ix.Done(keys+8, []int64{start - int64(delay/time.Second)}, time.Time{}) // applied: nothing left
	if got := take(34 * time.Second); len(got) != 0 || asked != 0 {
		t.Fatalf("after a batch applied TakeDue took %v and asked %d times; want none, none asked", got, asked)
	}
	if got := take(delay); len(got) != keys {
		t.Fatalf("at the delay TakeDue took %d keys; want %d", len(got), keys)
	}
	if got := take(30*time.Second + delay); len(got) != 8 {
		t.Fatalf("at the new times' delay TakeDue took %v; want the 8 keys polled anew", got)
	}
}
