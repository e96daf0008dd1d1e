package loader

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/spoold/spoold/spool"
)

// walkIndex is a fakeIndex that records the walk bounds Rescans marks and
// answers RoomAgain from room.
type walkIndex struct {
	*fakeIndex
	events     chan string
	begin, end func() // called first, if set
	room       func() bool
}

func (x *walkIndex) BeginWalk() {
	if x.begin != nil {
		x.begin()
	}
	x.events <- "begin"
}

func (x *walkIndex) EndWalk() {
	if x.end != nil {
		x.end()
	}
	x.events <- "end"
}

// RoomAgain sends "room" when room says yes, else "asked" (without
// blocking: the test reads the first one).
func (x *walkIndex) RoomAgain() bool {
	ok := x.room()
	if ok {
		x.events <- "room"
	} else {
		select {
		case x.events <- "asked":
		default:
		}
	}
	return ok
}

func runRescans(t *testing.T, l *Loader, ix *walkIndex) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Rescans(ctx, ix) }()
	return func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Rescans = %v, want context.Canceled", err)
		}
	}
}

func nextEvents(t *testing.T, ix *walkIndex, n int) []string {
	t.Helper()
	var got []string
	for range n {
		got = append(got, <-ix.events)
	}
	return got
}

// TestRescansReleaseHeldKeysOnlyAfterACleanWalk: a walk with an error
// leaves the keys the index holds for refused entries held (no EndWalk);
// the index having room again starts the next walk at once, without a
// rescan interval, and that clean walk ends with EndWalk.
func TestRescansReleaseHeldKeysOnlyAfterACleanWalk(t *testing.T) {
	sp := openSpool(t, "1:2")
	refs := putEntries(t, sp, 20, 1000)
	ix := &walkIndex{fakeIndex: newFakeIndex(), events: make(chan string, 8)}
	walks, rooms := 0, 0 // both used on the goroutine of Rescans only
	ix.begin = func() { walks++ }
	ix.fail = func(r spool.Ref) error {
		if walks == 1 && r == refs[3] {
			return errors.New("hash collision")
		}
		return nil
	}
	ix.room = func() bool { rooms++; return rooms == 1 } // room once, after the first walk
	l := newTestLoader(t, sp, ix, Params{Files: 100, Threshold: hour}, newFakeClock())
	l.rescanEvery, l.roomEvery = 0, time.Millisecond
	stop := runRescans(t, l, ix)
	got := nextEvents(t, ix, 4)
	stop()
	if want := []string{"begin", "room", "begin", "end"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	if !l.NextRescan().IsZero() {
		t.Errorf("NextRescan = %v without a rescan interval", l.NextRescan())
	}
}

// TestRescansScheduleTheNextWalk: after a walk, NextRescan is the rescan
// interval after the walk ended, and a clean walk ends with EndWalk.
func TestRescansScheduleTheNextWalk(t *testing.T) {
	sp := openSpool(t, "1:2")
	putEntries(t, sp, 5, 1000)
	ix := &walkIndex{fakeIndex: newFakeIndex(), events: make(chan string, 4)}
	l := newTestLoader(t, sp, ix, Params{Files: 100, Threshold: hour}, newFakeClock())
	l.rescanEvery, l.roomEvery = time.Hour, time.Millisecond
	var next time.Time
	var ended time.Time
	ix.end = func() { ended = time.Now() }
	ix.room = func() bool { // asked while Rescans waits: the next walk is scheduled
		next = l.NextRescan()
		return false
	}
	stop := runRescans(t, l, ix)
	got := nextEvents(t, ix, 2)
	for {
		if e := <-ix.events; e == "asked" {
			break
		}
	}
	stop()
	if want := []string{"begin", "end"}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	if gap := next.Sub(ended); gap < time.Hour || gap > time.Hour+time.Minute {
		t.Errorf("next rescan %v after the walk ended, want the 1h interval", gap)
	}
}
