package shm

import (
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/testclock"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testEpoch is where the tests' clocks start.
var testEpoch = time.Unix(1_700_000_000, 0)

func newFakeClock() *testclock.Clock { return testclock.New(testEpoch) }

// at is the time d after testEpoch.
func at(d time.Duration) time.Time { return testEpoch.Add(d) }

// newTestIndex returns an index with few shards, a fake clock and the given
// capacity (0: the default).
func newTestIndex(t testing.TB, maxBytes int64) (*Index, *testclock.Clock) {
	t.Helper()
	c := newFakeClock()
	o := DefaultOptions()
	o.Shards = 4
	o.Now = c.Now
	if maxBytes != 0 {
		o.MaxBytes = maxBytes
	}
	ix, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return ix, c
}

// mustAdd adds an entry that must be new.
func mustAdd(t testing.TB, ix *Index, hash uint64, key string, ts int64) {
	t.Helper()
	if added, err := ix.Add(hash, key, ts); !added || err != nil {
		t.Fatalf("Add(%#x, %q, %d) = %v, %v; want true, nil", hash, key, ts, added, err)
	}
}

// noDue makes every key due at once.
func noDue(_ uint64, since time.Time) time.Time { return since }
