package poller_test

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/internal/testing/simtest"
	"github.com/spoold/spoold/internal/testing/spooltest"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/simulate"
	"github.com/spoold/spoold/spool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is the injected clock the simulator and the poller share. With
// answerStep set, each answer of the simulator comes that much after the
// one before (answerNow is the simulator's clock).
type clock struct {
	mu         sync.Mutex
	t          time.Time
	answerStep time.Duration
}

func newClock() *clock { return &clock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) answerNow() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(c.answerStep)
	return c.t
}

func (c *clock) stepAnswers(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.answerStep = d }
func (c *clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// simTargets returns targets for devices of s with the given profile.
func simTargets(t *testing.T, s *simulate.Simulator, profile, extra string, devices ...int) []*fleet.Target {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "defaults profile=%s timeout=2s retries=0\n", profile)
	for _, i := range devices {
		name := s.Fleet().Name(i)
		fmt.Fprintf(&b, "%s %s community=%s %s\n", name, s.Addr(), name, extra)
	}
	ts, err := fleet.ParseTargets(strings.NewReader(b.String()), "sim.targets", nil)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func openSpool(t *testing.T) *spool.Spool { return spooltest.Open(t, spool.DefaultOptions()) }

// sink records what the poller adds; with full set it refuses.
type sink struct {
	mu    sync.Mutex
	added []spool.Ref
	full  bool
}

var errFull = errors.New("index full")

func (k *sink) Add(hash uint64, key string, ts int64) (bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.full {
		return false, errFull
	}
	if spool.KeyHash(key) != hash {
		return false, fmt.Errorf("hash of %s is not %x", key, hash)
	}
	k.added = append(k.added, spool.Ref{Hash: hash, Time: ts})
	return true, nil
}

func (k *sink) refs() []spool.Ref {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]spool.Ref(nil), k.added...)
}

// rig is a simulator, a poller of some of its devices and a spool.
type rig struct {
	sim   *simulate.Simulator
	clock *clock
	sp    *spool.Spool
	sink  *sink
	p     *poller.Poller
}

func newRig(t *testing.T, so simulate.Options, po poller.Options, profile string, devices ...int) *rig {
	t.Helper()
	r := &rig{clock: newClock(), sink: &sink{}}
	so.Now = r.clock.answerNow
	r.sim = simtest.Serve(t, so)
	r.sp = openSpool(t)
	po.Now = r.clock.Now
	var err error
	r.p, err = poller.New(po, simTargets(t, r.sim, profile, "", devices...), r.sp, r.sink, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// entry reads the entry of device i at time at.
func (r *rig) entry(t *testing.T, i int, at time.Time) spool.Entry {
	t.Helper()
	for _, e := range spooled(t, r.sp, r.sim.Fleet().Name(i)) {
		if e.Time == at.Unix() {
			return e
		}
	}
	t.Fatalf("no entry of device %d at %v", i, at)
	return spool.Entry{}
}

// spooled returns every entry of key in the spool's segments, by time.
func spooled(t *testing.T, sp *spool.Spool, key string) []spool.Entry {
	t.Helper()
	hash := spool.KeyHash(key)
	dir := filepath.Join(sp.Dir(), sp.Levels().Dir(hash))
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("read the segments of %s: %v", key, err)
	}
	var out []spool.Entry
	for _, n := range names {
		ref, err := spool.ParseName(n.Name())
		if err != nil || ref.Hash != hash {
			continue
		}
		g, err := sp.ReadSegment(ref)
		if err != nil || len(g.Bad) > 0 {
			t.Fatalf("read segment %s: %v %+v", ref, err, g.Bad)
		}
		out = append(out, g.Entries...)
	}
	slices.SortFunc(out, func(a, b spool.Entry) int { return cmp.Compare(a.Time, b.Time) })
	return out
}

func simOptions(devices int) simulate.Options {
	o := simulate.DefaultOptions()
	o.Devices = devices
	o.Interfaces = 4
	o.Workers = 2
	return o
}

func pollOptions() poller.Options {
	o := poller.DefaultOptions()
	o.Concurrency = 8
	return o
}
