package rrdwriter

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/spool"
)

// appendCG appends an entry with counter c and gauge g to key's open
// segment and indexes the segment when the append created it.
func (e *env) appendCG(key string, ts int64, c uint64, g float64) spool.Ref {
	e.t.Helper()
	ent := spool.Entry{Key: key, Time: ts, Values: []spool.Value{cnt("c", c), gauge("g", g)}}
	ref, created, err := e.sp.Append(&ent)
	if err != nil {
		e.t.Fatal(err)
	}
	if created {
		if _, err := e.ix.Add(ref.Hash, key, ref.Time); err != nil {
			e.t.Fatal(err)
		}
	}
	return ref
}

func rowTimes(rows []rrd.Sample) []int64 {
	var ts []int64
	for _, r := range rows {
		ts = append(ts, r.Time)
	}
	return ts
}

// TestSegmentIsOneUpdateAndOneRemoval: a segment of 12 polls is written
// with one update call, read from memory, and removed with one unlink.
func TestSegmentIsOneUpdateAndOneRemoval(t *testing.T) {
	f := newFake()
	e := newEnv(t, f, nil)
	var ref spool.Ref
	var want []int64
	for i := range int64(12) {
		ref = e.appendCG("r", t0+300*i, uint64(i), float64(i))
		want = append(want, t0+300*i)
	}
	if err := e.flush("r"); err != nil {
		t.Fatal(err)
	}
	if got := rowTimes(f.rows(e.rrdPath("r"))); !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	st, sst := e.w.Stats(), e.sp.Stats()
	if f.updateCalls() != 1 || st.EntriesWritten != 12 || sst.SegmentsRead != 1 || sst.Removed != 1 || e.exists(ref) {
		t.Fatalf("update calls %d, written %d, segments read %d, removed %d, exists %v", f.updateCalls(), st.EntriesWritten, sst.SegmentsRead, sst.Removed, e.exists(ref))
	}
	// This process appended the segment: the writer read it from memory.
	if sst.SegmentsFromMemory != 1 || sst.MemoryBytes != 0 {
		t.Fatalf("%d segments read from memory, %d bytes kept after; want 1, 0", sst.SegmentsFromMemory, sst.MemoryBytes)
	}
	// The writer sealed the segment: the next poll starts a new one.
	if next := e.appendCG("r", t0+300*12, 12, 12); next == ref {
		t.Fatal("an append after the write went to the written segment")
	}
}

// TestBadBytesInASegmentCostNoGoodEntry: a torn tail and a bad entry in
// the middle, as a power loss leaves them for the next process (which
// has no memory of the appends: the spool keeps none here); every good
// entry lands, the bad bytes are quarantined with their offsets, the
// segment is removed.
func TestBadBytesInASegmentCostNoGoodEntry(t *testing.T) {
	f := newFake()
	e := newEnvWith(t, func(*rrd.Root) RRD { return f }, func(o *spool.Options) { o.MemoryBytes = 0 }, nil)
	ref := e.appendCG("r", t0, 1, 1)
	for i := int64(1); i < 4; i++ {
		e.appendCG("r", t0+300*i, uint64(i), float64(i))
	}
	path := e.sp.EntryPath(ref)
	data, _ := os.ReadFile(path)
	n := len(data) / 4
	data[n+n/2] ^= 0x40                                     // the second entry's bytes
	data = append(data, data[:n-5]...)                      // and a torn fifth entry
	if err := os.WriteFile(path, data, 0o640); err != nil { // as a power loss leaves it
		t.Fatal(err)
	}
	if err := e.flush("r"); err != nil {
		t.Fatal(err)
	}
	if got, want := rowTimes(f.rows(e.rrdPath("r"))), []int64{t0, t0 + 600, t0 + 900}; !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	q := e.quarantined()
	if len(q) != 2 || e.exists(ref) {
		t.Fatalf("quarantined %q, segment still there: %v", q, e.exists(ref))
	}
	joined := strings.Join(q, "\n")
	for _, want := range []string{"checksum mismatch", "torn", "offset: " + strconv.Itoa(n), "offset: " + strconv.Itoa(4*n)} {
		if !strings.Contains(joined, want) {
			t.Errorf("quarantine reasons lack %q:\n%s", want, joined)
		}
	}
}

// TestFutureEntryNeverHidesLaterPolls is the hardening case of an entry
// dated tomorrow dropped into the spool: it is quarantined, the RRD file's
// last update stays today, and every real poll after it is written.
func TestFutureEntryNeverHidesLaterPolls(t *testing.T) {
	f := newFake()
	e := newEnv(t, f, func(o *Options) { o.FutureTolerance = 10 * time.Minute })
	now := e.clock.Now().Unix()
	tomorrow := now + 86400
	e.putCG("r", tomorrow, 1, 1)
	e.appendCG("r", now-600, 2, 2)
	if err := e.flush("r"); err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= 3; i++ {
		e.clock.Advance(300 * time.Second)
		e.appendCG("r", now-600+300*i, uint64(2+i), 2)
		if err := e.flush("r"); err != nil {
			t.Fatal(err)
		}
	}
	got := rowTimes(f.rows(e.rrdPath("r")))
	if want := []int64{now - 600, now - 300, now, now + 300}; !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v: a future entry hid later polls", got, want)
	}
	if q := e.quarantined(); len(q) != 1 || !strings.Contains(q[0], "ahead of the clock") {
		t.Fatalf("quarantined %q", q)
	}
	if st := e.w.Stats(); st.QuarantinedFuture != 1 || st.SkippedAlreadyApplied != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestStaleEntryIsQuarantinedNotSkipped: an entry older than the file's
// last update that was never applied (the clock stepped back) is
// quarantined and the target flagged; an entry left by a crash between an
// update and its removal (it ends at the last update) is skipped.
func TestStaleEntryIsQuarantinedNotSkipped(t *testing.T) {
	f := newFake()
	e := newEnv(t, f, nil)
	e.appendCG("r", t0, 1, 1)
	e.appendCG("r", t0+300, 2, 2)
	if err := e.flush("r"); err != nil {
		t.Fatal(err)
	}
	// A crash between update and removal: the same entries again.
	e.putCG("r", t0+300, 2, 2)
	if err := e.flush("r"); err != nil {
		t.Fatal(err)
	}
	if st := e.w.Stats(); st.SkippedAlreadyApplied != 1 || st.QuarantinedStale != 0 || len(e.quarantined()) != 0 {
		t.Fatalf("crash leftover: stats %+v, quarantined %q", st, e.quarantined())
	}
	// The clock stepped back: an entry between the two, never applied.
	e.putCG("r", t0+100, 9, 9)
	if err := e.flush("r"); err != nil {
		t.Fatal(err)
	}
	q := e.quarantined()
	if len(q) != 1 || !strings.Contains(q[0], "never applied") {
		t.Fatalf("quarantined %q", q)
	}
	te := e.w.TargetErrors()
	if len(te) != 1 || te[0].Kind != KindStale || !te[0].RetryAt.IsZero() {
		t.Fatalf("target errors %+v; want the target flagged stale, without backoff", te)
	}
	e.appendCG("r", t0+600, 3, 3)
	if err := e.flush("r"); err != nil {
		t.Fatal(err)
	}
	if got := rowTimes(f.rows(e.rrdPath("r"))); !slices.Equal(got, []int64{t0, t0 + 300, t0 + 600}) {
		t.Fatalf("rows %v", got)
	}
}

// TestDuplicateSecondAcrossSegments: two segments holding the same poll
// second: the first is applied, the second copy quarantined, both removed.
func TestDuplicateSecondAcrossSegments(t *testing.T) {
	f := newFake()
	e := newEnv(t, f, nil)
	a := e.appendCG("r", t0, 1, 1)
	e.appendCG("r", t0+300, 2, 2)
	e.sp.Seal(a.Hash)
	b := e.appendCG("r", t0+301, 3, 3)
	// another process drops in a copy of t0+300 named by itself
	ent := spool.Entry{Key: "r", Time: t0 + 300, Values: []spool.Value{cnt("c", 7)}}
	if _, err := e.sp.Write(&ent); err != nil {
		t.Fatal(err)
	}
	e.ix.Add(ent.Ref().Hash, "r", t0+300)
	if err := e.flush("r"); err != nil {
		t.Fatal(err)
	}
	rows := f.rows(e.rrdPath("r"))
	if got := rowTimes(rows); !slices.Equal(got, []int64{t0, t0 + 300, t0 + 301}) || rows[1].Values[0] != "2" {
		t.Fatalf("rows %+v", rows)
	}
	if q := e.quarantined(); len(q) != 1 || !strings.Contains(q[0], "a second entry of poll time") {
		t.Fatalf("quarantined %q", q)
	}
	if e.exists(a) || e.exists(b) || e.exists(ent.Ref()) {
		t.Fatal("segments left")
	}
}

// TestUnremovableSegmentHoldsItsKey: an applied segment that cannot be
// removed keeps newer entries of its key from being written until it can,
// so what is left on disk always ends at the file's last update.
func TestUnremovableSegmentHoldsItsKey(t *testing.T) {
	f := newFake()
	e := newEnv(t, f, nil)
	ref := e.appendCG("r", t0, 1, 1)
	bad := spool.Ref{Hash: ref.Hash, Time: t0 - 1}
	e.w.addStuck(bad) // as if its removal had failed (a read-only spool)
	e.appendCG("r", t0+300, 2, 2)
	if n := e.w.runOnce(e.clock.Now().Add(time.Hour)); n != 0 {
		t.Fatalf("wrote %d batches of a held key", n)
	}
	// The spool is writable again: the retry's removal succeeds (the file
	// is gone) and releases the key.
	if err := e.flush("r"); err != nil {
		t.Fatal(err)
	}
	if got := rowTimes(f.rows(e.rrdPath("r"))); !slices.Equal(got, []int64{t0, t0 + 300}) {
		t.Fatalf("rows %v", got)
	}
}

// TestTwoPollsOfOneSecondBothLand: a restart within the second of the last
// poll polls again in that second; the two entries (different
// milliseconds, different segments) are both applied, in order.
func TestTwoPollsOfOneSecondBothLand(t *testing.T) {
	f := newFake()
	e := newEnv(t, f, nil)
	for _, ms := range []uint16{100, 900} {
		ent := spool.Entry{Key: "r", Time: t0, Milli: ms, Values: []spool.Value{cnt("c", uint64(ms))}}
		ref, created, err := e.sp.Append(&ent)
		if err != nil || created != (ms == 100) {
			t.Fatalf("append %d ms: %v, created %v", ms, err, created)
		}
		e.ix.Add(ref.Hash, "r", ref.Time)
	}
	if err := e.flush("r"); err != nil {
		t.Fatal(err)
	}
	rows := f.rows(e.rrdPath("r"))
	if len(rows) != 2 || rows[0].Milli != 100 || rows[1].Milli != 900 || len(e.quarantined()) != 0 {
		t.Fatalf("rows %+v, quarantined %q", rows, e.quarantined())
	}
}

// TestSegmentsAreRemovedNewestLast: a segment named a second early (its own
// second was taken: a restart within the second of the last poll) can hold
// the newer entry; removal goes by newest entry, not by name, so what a
// crash between removals leaves ends with the file's last update.
func TestSegmentsAreRemovedNewestLast(t *testing.T) {
	e1 := spool.Entry{Key: "r", Time: t0, Milli: 100}
	e2 := spool.Entry{Key: "r", Time: t0, Milli: 900}
	e0 := spool.Entry{Key: "r", Time: t0 - 5}
	p := &pass{segs: []spool.Segment{
		{Ref: spool.Ref{Time: t0 - 1}, Entries: []spool.Entry{e2}}, // named early, newest
		{Ref: spool.Ref{Time: t0}, Entries: []spool.Entry{e1}},
		{Ref: spool.Ref{Time: t0 - 9}}, // empty
		{Ref: spool.Ref{Time: t0 - 5}, Entries: []spool.Entry{e0}},
	}}
	if got := p.byNewest(); !slices.Equal(got, []int{2, 3, 1, 0}) {
		t.Fatalf("removal order %v, want [2 3 1 0] (the empty one, then by newest entry)", got)
	}
}
