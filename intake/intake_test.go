package intake_test

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spoold/spoold/intake"
	"github.com/spoold/spoold/internal/testing/spooltest"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

func openSpool(t *testing.T) *spool.Spool {
	t.Helper()
	o := spool.DefaultOptions()
	o.Dir = filepath.Join(t.TempDir(), "spool")
	return spooltest.Open(t, o)
}

func newIndex(t *testing.T, maxBytes int64) *shm.Index {
	t.Helper()
	o := shm.DefaultOptions()
	o.Shards, o.MaxBytes = 1, maxBytes
	ix, err := shm.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func entry(key string, ts int64) *spool.Entry {
	return &spool.Entry{Key: key, Time: ts, Values: []spool.Value{{Name: "g", Type: spool.Gauge, Gauge: float64(ts)}}}
}

// spooled returns the times of key's entries in the segments the index
// names, read back from the spool.
func spooled(t *testing.T, sp *spool.Spool, hash uint64, times []int64) []int64 {
	t.Helper()
	var out []int64
	for _, ts := range times {
		g, err := sp.ReadSegment(spool.Ref{Hash: hash, Time: ts})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range g.Entries {
			out = append(out, e.Time)
		}
	}
	return out
}

// TestAppendIndexesTheSegmentItStarts: the first entry of a key starts a
// segment, which is indexed under the entry's time; the next ones go into
// it, and the index still names that one segment.
func TestAppendIndexesTheSegmentItStarts(t *testing.T) {
	sp, ix := openSpool(t), newIndex(t, 1<<20)
	in := intake.New(sp, ix)
	for _, ts := range []int64{1000, 1300, 1600} {
		if indexErr, err := in.Append(entry("dev1", ts)); indexErr != nil || err != nil {
			t.Fatalf("Append(%d) = %v, %v", ts, indexErr, err)
		}
	}
	hash := spool.KeyHash("dev1")
	b, ok := ix.Peek(hash)
	if !ok || b.Key != "dev1" || !slices.Equal(b.Times, []int64{1000}) {
		t.Fatalf("index holds %+v, %v; want dev1's one segment at 1000", b, ok)
	}
	if got := spooled(t, sp, hash, b.Times); !slices.Equal(got, []int64{1000, 1300, 1600}) {
		t.Errorf("the indexed segment holds %v", got)
	}
}

// TestAppendToAFullIndexKeepsTheEntry: an index with no room refuses the
// new segment; the entry is on disk all the same, and Append says the
// index refused it (ErrFull) without failing.
func TestAppendToAFullIndexKeepsTheEntry(t *testing.T) {
	sp, ix := openSpool(t), newIndex(t, 1)
	in := intake.New(sp, ix)
	indexErr, err := in.Append(entry("dev1", 1000))
	if err != nil || !errors.Is(indexErr, shm.ErrFull) {
		t.Fatalf("Append = %v, %v; want stored, the index full", indexErr, err)
	}
	if _, ok := ix.Peek(spool.KeyHash("dev1")); ok {
		t.Error("a refused segment is in the index")
	}
	if got := spooled(t, sp, spool.KeyHash("dev1"), []int64{1000}); !slices.Equal(got, []int64{1000}) {
		t.Errorf("the spool holds %v, want the entry at 1000", got)
	}
}

// TestAppendWithoutIndexStores: with no index the entries are stored.
func TestAppendWithoutIndexStores(t *testing.T) {
	sp := openSpool(t)
	in := intake.New(sp, nil)
	for _, ts := range []int64{1000, 1300} {
		if indexErr, err := in.Append(entry("dev1", ts)); indexErr != nil || err != nil {
			t.Fatalf("Append(%d) = %v, %v", ts, indexErr, err)
		}
	}
	if got := spooled(t, sp, spool.KeyHash("dev1"), []int64{1000}); !slices.Equal(got, []int64{1000, 1300}) {
		t.Errorf("the spool holds %v", got)
	}
}

// TestAppendSpoolErrorIndexesNothing: an entry the spool refuses (a
// second entry of a key at the same time) is reported as the error, and
// nothing is indexed.
func TestAppendSpoolErrorIndexesNothing(t *testing.T) {
	sp, ix := openSpool(t), newIndex(t, 1<<20)
	in := intake.New(sp, ix)
	if _, err := in.Append(entry("dev1", 1000)); err != nil {
		t.Fatal(err)
	}
	before := ix.Stats()
	indexErr, err := in.Append(entry("dev1", 1000))
	if !errors.Is(err, spool.ErrDuplicateTime) || indexErr != nil {
		t.Fatalf("Append of a repeated time = %v, %v; want the spool's ErrDuplicateTime", indexErr, err)
	}
	if s := ix.Stats(); s.Entries != before.Entries {
		t.Errorf("index holds %d segments after a refused append, %d before", s.Entries, before.Entries)
	}
}

// onlyAppend hides a spool's AppendRun: AppendRun falls back to Append.
type onlyAppend struct{ sp *spool.Spool }

func (o onlyAppend) Append(e *spool.Entry) (spool.Ref, bool, error) { return o.sp.Append(e) }

// TestAppendRunIndexesTheSegmentsItStarts: a run of one key's entries is
// on disk and its new segment indexed, with the spool's AppendRun or with
// Append alone; it stops at an entry the spool refuses.
func TestAppendRunIndexesTheSegmentsItStarts(t *testing.T) {
	for _, run := range []bool{true, false} {
		sp, ix := openSpool(t), newIndex(t, 1<<20)
		var in *intake.Intake
		if run {
			in = intake.New(sp, ix)
		} else {
			in = intake.New(onlyAppend{sp}, ix)
		}
		es := []spool.Entry{*entry("k", 100), *entry("k", 101), *entry("k", 101), *entry("k", 102)}
		n, _, refused, _, err := in.AppendRun(es, nil)
		if n != 2 || refused != 0 || !errors.Is(err, spool.ErrDuplicateTime) {
			t.Fatalf("run=%v: AppendRun = %d, %d refused, %v; want 2 on disk, then ErrDuplicateTime", run, n, refused, err)
		}
		b, ok := ix.TakeKey(spool.KeyHash("k"))
		if !ok || !slices.Equal(b.Times, []int64{100}) {
			t.Fatalf("run=%v: index holds %v, %v; want the segment 100", run, b.Times, ok)
		}
		g, err := sp.ReadSegment(spool.Ref{Hash: spool.KeyHash("k"), Time: 100})
		if err != nil || len(g.Entries) != 2 {
			t.Fatalf("run=%v: segment has %d entries, %v; want 2", run, len(g.Entries), err)
		}
	}
}
