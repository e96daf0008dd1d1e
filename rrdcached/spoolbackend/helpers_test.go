package spoolbackend

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoold/spoold/internal/testing/testclock"
	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/loader"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// What the daemon gives New.
var (
	_ Writer     = (*rrdwriter.Writer)(nil)
	_ Spool      = (*spool.Spool)(nil)
	_ Index      = (*shm.Index)(nil)
	_ LeafWalker = (*loader.Loader)(nil)
)

// t0 is a step boundary (a multiple of 300 s).
const t0 = int64(1_700_000_100)

// env is a spool, an index and a writer over real librrd, as the daemon
// wires them, for a backend's tests.
type env struct {
	t     *testing.T
	sp    *spool.Spool
	ix    *shm.Index
	w     *rrdwriter.Writer
	wo    rrdwriter.Options // w's
	bo    Options           // the backend's
	clock *testclock.Clock
	dir   string        // RRD files
	ticks chan struct{} // w's Run woke (rrdwriter.Options.OnTick)
}

// newProtoEnv returns a writer over real librrd whose only poller target
// (with a profile) is "dev1", and its backend.
func newProtoEnv(t *testing.T) (*env, *Backend) { return newProtoEnvWith(t, nil, nil) }

// newProtoEnvWith is newProtoEnv with the writer's and the backend's
// options changed by editW and editB (nil: as they are).
func newProtoEnvWith(t *testing.T, editW func(*rrdwriter.Options), editB func(*Options)) (*env, *Backend) {
	t.Helper()
	testenv.NeedRRDTool(t)
	so := spool.DefaultOptions()
	so.Dir = filepath.Join(t.TempDir(), "spool")
	sp, err := spool.Open(so)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	c := testclock.New(time.Unix(t0+3600, 0))
	io := shm.DefaultOptions()
	io.Shards, io.Now = 4, c.Now
	ix, err := shm.New(io)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, sp: sp, ix: ix, clock: c, ticks: make(chan struct{}, 1)}
	wo := rrdwriter.DefaultOptions()
	wo.Dir = filepath.Join(t.TempDir(), "rrd")
	// librrd, on the writer's own root of the RRD directory.
	wo.Native, wo.Now, wo.Tick = false, c.Now, time.Millisecond
	wo.FutureTolerance = 1 << 62 // the test clock stands still while entries are dated ahead
	// dev1 is a poller target's: claimed. Its file is never written here.
	wo.Layout = func(k string) (rrd.Layout, bool) { return rrd.Layout{}, k == "dev1" }
	wo.OnTick = func() {
		select {
		case e.ticks <- struct{}{}:
		default:
		}
	}
	if editW != nil {
		editW(&wo)
	}
	if e.w, err = rrdwriter.New(sp, ix, wo); err != nil {
		t.Fatal(err)
	}
	e.wo, e.dir = wo, wo.Dir
	bo := DefaultOptions()
	bo.Dir, bo.Now, bo.FutureTolerance = wo.Dir, c.Now, wo.FutureTolerance
	bo.Claimed = func(k string) bool { _, ok := wo.Layout(k); return ok }
	if editB != nil {
		editB(&bo)
	}
	e.bo = bo
	b, err := New(e.w, sp, ix, bo)
	if err != nil {
		t.Fatal(err)
	}
	return e, b
}

// runPass runs one round of the writer's Run at the clock's time now: Run
// until it woke twice (so the first wake's due targets were taken), then
// stopped, which waits for their writes.
func (e *env) runPass() {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.w.Run(ctx) }()
	for range 2 {
		<-e.ticks
	}
	cancel()
	if err := <-done; err != nil {
		e.t.Fatal(err)
	}
}

// putCG spools an entry of key with counter c and gauge g and indexes it,
// as a poll result.
func (e *env) putCG(key string, ts int64, c uint64, g float64) {
	e.t.Helper()
	ent := spool.Entry{Key: key, Time: ts, Values: []spool.Value{
		{Name: "c", Type: spool.Counter, Counter: c}, {Name: "g", Type: spool.Gauge, Gauge: g}}}
	ref, err := e.sp.Write(&ent)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.ix.Add(ref.Hash, key, ts); err != nil {
		e.t.Fatal(err)
	}
}
