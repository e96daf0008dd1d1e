package poller

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"
)

// BenchmarkPollBytes measures what one poll of a simulated device of 48
// interfaces (the if-mib profile, in bulk) allocates: the garbage a fleet's
// polls give the collector, which sets how often it runs. Every allocation
// is profiled (runtime.MemProfileRate 1) and those made under a Poller's
// methods are counted, not the simulator's, which runs in this process,
// nor the profile's own: B/if-poll and allocs/if-poll per interface
// polled.
func BenchmarkPollBytes(b *testing.B) {
	targets, interfaces := benchTargets(b, 1)
	p := &Poller{opts: DefaultOptions(), log: slog.New(slog.DiscardHandler), now: time.Now}
	d := newDevice(targets[0], &p.opts)
	ctx := context.Background()
	if err := p.discoverDevice(ctx, d); err != nil {
		b.Fatal(err)
	}
	pl := d.plan.Load()
	poll := func() {
		res, err := p.poll(ctx, d, pl, false)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.values) != pl.nValues {
			b.Fatalf("%d values polled, want %d", len(res.values), pl.nValues)
		}
		p.release(&res)
	}
	poll()
	rate := runtime.MemProfileRate
	defer func() { runtime.MemProfileRate = rate }()
	runtime.MemProfileRate = 1
	bytes0, allocs0 := pollerAllocs()
	b.ResetTimer()
	for range b.N {
		poll()
	}
	b.StopTimer()
	bytes1, allocs1 := pollerAllocs()
	n := float64(b.N * interfaces)
	b.ReportMetric(float64(bytes1-bytes0)/n, "B/if-poll")
	b.ReportMetric(float64(allocs1-allocs0)/n, "allocs/if-poll")
}

// pollerAllocs returns the bytes and objects allocated so far under a
// method of Poller, as the memory profile has them: it publishes
// an allocation at the end of the collection after the one it was made
// in, so two collections run first.
func pollerAllocs() (bytes, objects int64) {
	runtime.GC()
	runtime.GC()
	var recs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, true)
	for {
		recs = make([]runtime.MemProfileRecord, n+64)
		var ok bool
		if n, ok = runtime.MemProfile(recs, true); ok {
			recs = recs[:n]
			break
		}
	}
	for _, r := range recs {
		frames := runtime.CallersFrames(r.Stack())
		for {
			f, more := frames.Next()
			if strings.HasPrefix(f.Function, "github.com/spoold/spoold/poller.(*Poller).") {
				bytes += r.AllocBytes
				objects += r.AllocObjects
				break
			}
			if !more {
				break
			}
		}
	}
	return bytes, objects
}
