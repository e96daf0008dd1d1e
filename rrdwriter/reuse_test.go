package rrdwriter

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/spoold/spoold/spool"
)

// TestSegmentCreatedWhileItsKeyIsInFlightIsWritten: a batch's applied
// segments are removed before the batch ends (removal.go); a poll
// appended in between starts a new segment (the batch sealed the open
// one). That segment must not take the name of one of the batch's
// segments, freed by the removal: the index holds the name in flight,
// takes the new segment's Add for a duplicate of it, and forgets it when
// the batch ends, and the new segment, open and appended to poll after
// poll, would never be written (at the next start it would be read
// beside newer entries applied meanwhile, and skipped or set aside).
func TestSegmentCreatedWhileItsKeyIsInFlightIsWritten(t *testing.T) {
	f := newFake()
	e := newEnv(t, f, nil)
	const key = "router1"
	poll := func(ts int64, milli uint16, c uint64) {
		t.Helper()
		ent := spool.Entry{Key: key, Time: ts, Milli: milli, Values: []spool.Value{cnt("c", c), gauge("g", 1)}}
		ref, created, err := e.sp.Append(&ent)
		if err != nil {
			t.Fatal(err)
		}
		if created { // as the poller indexes a new segment
			if _, err := e.ix.Add(ref.Hash, key, ref.Time); err != nil {
				t.Fatal(err)
			}
		}
	}
	poll(t0+300, 0, 100)
	remove := e.w.rq.remove
	polled := false
	e.w.rq.remove = func(r spool.Ref) {
		remove(r)
		if !polled { // the next poll, in the same second, lands between the removal and the batch's end
			polled = true
			poll(t0+300, 500, 200)
		}
	}
	ctx := context.Background()
	if err := e.w.FlushKey(ctx, key); err != nil {
		t.Fatal(err)
	}
	e.w.WaitRemovals() // FlushKey returns before the removal the hook polls in
	e.w.rq.remove = remove
	poll(t0+301, 0, 300) // appended to the open segment
	if err := e.flush(key); err != nil {
		t.Fatal(err)
	}
	rows := f.rows(e.rrdPath(key))
	if len(rows) != 3 {
		t.Fatalf("%d rows written (%v); want the 3 polls", len(rows), rows)
	}
	if left, _ := filepath.Glob(filepath.Join(e.sp.Dir(), "?", "??", "*")); len(left) != 0 {
		t.Fatalf("segments left in the spool: %v", left)
	}
}
