package shm

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPeekTakesNothing: Peek and PeekKeys show pending and in-flight times
// of a key, ascending, and a take afterwards still gets the pending ones.
func TestPeekTakesNothing(t *testing.T) {
	ix, _ := newTestIndex(t, 0)
	for _, ts := range []int64{30, 10, 20} {
		if _, err := ix.Add(1, "/a.rrd", ts); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ix.Add(2, "b", 5); err != nil {
		t.Fatal(err)
	}
	b, ok := ix.TakeKey(1)
	if !ok {
		t.Fatal("TakeKey found nothing")
	}
	if _, err := ix.Add(1, "/a.rrd", 40); err != nil {
		t.Fatal(err)
	}
	got, ok := ix.Peek(1)
	if !ok || got.Key != "/a.rrd" || !slices.Equal(got.Times, []int64{10, 20, 30, 40}) {
		t.Fatalf("Peek = %+v, %v; want /a.rrd with 10 20 30 40", got, ok)
	}
	if _, ok := ix.Peek(3); ok {
		t.Error("Peek of a hash never added found something")
	}
	keys := ix.PeekKeys(func(k string) bool { return strings.HasPrefix(k, "/") })
	if len(keys) != 1 || keys[0].Hash != 1 {
		t.Fatalf("PeekKeys(/...) = %+v, want the key of hash 1 alone", keys)
	}
	ix.Done(1, b.Times, time.Time{})
	if b, ok := ix.TakeKey(1); !ok || !slices.Equal(b.Times, []int64{40}) {
		t.Errorf("after Peek, TakeKey = %+v, %v; want the pending 40", b, ok)
	}
}
