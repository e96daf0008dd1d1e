package poller_test

import (
	"context"
	"testing"

	"github.com/spoold/spoold/internal/testing/simtest"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/spool"
)

// batchSpool is a spool that is told each device's appends as a batch
// (poller.BatchAppender), as the daemon's disk tally is. Polls run one at
// a time (Concurrency 1), so the appends between a batch's start and end
// are its own.
type batchSpool struct {
	*spool.Spool
	told, appended []int // per batch: the n AppendBatch was given, the Appends fn made
	outside        int   // Appends outside any batch
	in             bool
}

func (b *batchSpool) Append(e *spool.Entry) (spool.Ref, bool, error) {
	if b.in {
		b.appended[len(b.appended)-1]++
	} else {
		b.outside++
	}
	return b.Spool.Append(e)
}

func (b *batchSpool) AppendBatch(n int, fn func() error) error {
	b.told, b.appended, b.in = append(b.told, n), append(b.appended, 0), true
	defer func() { b.in = false }()
	return fn()
}

// TestADevicesAppendsAreOneBatch: a BatchAppender is told every entry a
// device's poll writes as one batch of that many appends (the daemon
// measures each batch's disk writes once, counting n entries), and no
// entry is appended outside one.
func TestADevicesAppendsAreOneBatch(t *testing.T) {
	const devices = 3
	sim := simtest.Serve(t, simOptions(devices))
	ts := simTargets(t, sim, "if-mib", "", 0, 1, 2) // a key a row: 4 interfaces
	sp := &batchSpool{Spool: openSpool(t)}
	po := pollOptions()
	po.Concurrency = 1
	p, err := poller.New(po, ts, sp, &sink{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var _ poller.BatchAppender = sp
	// Until the tables' rows are polled (the first cycle discovers them):
	// a batch of a device's scalars and its 4 interfaces' rows.
	cycles := 0
	for ; cycles < 5 && (len(sp.told) == 0 || sp.told[len(sp.told)-1] < 4); cycles++ {
		if st := p.Cycle(context.Background()); st.OK != devices {
			t.Fatalf("cycle: %d of %d devices polled: %+v", st.OK, devices, st)
		}
	}
	if len(sp.told) != cycles*devices || sp.outside != 0 {
		t.Fatalf("%d batches in %d cycles, %d appends outside one; want %d batches (a device's poll each), none outside", len(sp.told), cycles, sp.outside, cycles*devices)
	}
	if last := sp.told[len(sp.told)-1]; last < 4 {
		t.Fatalf("after %d cycles a device's poll appends %d entries; want its 4 interfaces' rows", cycles, last)
	}
	total := 0
	for i, n := range sp.told {
		if n != sp.appended[i] {
			t.Fatalf("batch %d: told %d appends, made %d; want the same", i, n, sp.appended[i])
		}
		total += n
	}
	if w := sp.Stats().Written; w != uint64(total) {
		t.Fatalf("%d entries written to the spool, %d appended in batches", w, total)
	}
}
