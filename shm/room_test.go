package shm

import (
	"errors"
	"testing"
	"time"
)

// TestRoomAgain: an index has room again only after it refused an entry
// and has drained below 90% of its capacity since.
func TestRoomAgain(t *testing.T) {
	const n = 200
	ix, _ := newTestIndex(t, 2*keyOverhead+(n+1)*timeBytes)
	for ts := range int64(n) {
		mustAdd(t, ix, 1, "", ts)
	}
	if ix.RoomAgain() {
		t.Fatal("RoomAgain before any refusal")
	}
	mustAdd(t, ix, 2, "", 0)
	if _, err := ix.Add(2, "", 1); !errors.Is(err, ErrFull) {
		t.Fatalf("Add beyond capacity: %v; want ErrFull", err)
	}
	if ix.RoomAgain() {
		t.Fatal("RoomAgain while full")
	}
	b, _ := ix.TakeKey(2)
	ix.Done(2, b.Times, time.Time{})
	if st := ix.Stats(); st.Bytes < st.MaxBytes/10*9 || ix.RoomAgain() {
		t.Fatalf("RoomAgain = %v at %d of %d bytes, want false above 90%%", ix.RoomAgain(), st.Bytes, st.MaxBytes)
	}
	b, _ = ix.TakeKey(1)
	ix.Done(1, b.Times, time.Time{})
	if !ix.RoomAgain() {
		t.Fatalf("RoomAgain = false with the index empty after a refusal: %+v", ix.Stats())
	}
	ix.BeginWalk()
	if ix.RoomAgain() {
		t.Fatal("RoomAgain after BeginWalk lowered the overflow")
	}
}
