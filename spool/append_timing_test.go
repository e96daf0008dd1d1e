package spool

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// cpuTime returns the process's user and system time so far, in ns.
func cpuTime(b *testing.B) int64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkAppend is the cost of one poll of one interface in the spool:
// an Append of a 10-counter entry (an IF-MIB row) to its key's open
// segment, keys in the poller's order (every key of a cycle, then the
// next cycle). With more keys than held descriptors (the fleet's case:
// 96,000 rows against 1,024) nearly every append opens its segment by
// name; with SegmentOpenFiles 0 every one does; with every key held it is
// one write. The spool is opened as the daemon opens it (level
// directories precreated), and a first, untimed cycle creates every
// key's segment: what is timed are the appends of the cycles after.
// Besides the wall time it reports the process's CPU time (user and
// system, getrusage) per append, cpu-ns/op: the figure that holds on a
// machine loaded by others, where the wall time mostly measures waiting.
func BenchmarkAppend(b *testing.B) {
	for _, c := range []struct{ keys, held int }{{16384, 1024}, {16384, 0}, {512, 1024}} {
		b.Run(fmt.Sprintf("keys=%d/held=%d", c.keys, c.held), func(b *testing.B) {
			opts := DefaultOptions()
			opts.Dir, opts.SegmentOpenFiles, opts.PrecreateDirs = b.TempDir(), c.held, true
			s, err := Open(opts)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			keys := make([]string, c.keys)
			for i := range keys {
				keys[i] = fmt.Sprintf("router%03d/ifName=ge-0/0/%d", i/48, i%48)
			}
			vals := make([]Value, 10)
			for i := range vals {
				vals[i] = Value{Name: fmt.Sprintf("ds%02d", i), Type: Counter}
			}
			e := Entry{Values: vals}
			i := 0
			poll := func() {
				e.Key, e.Time = keys[i%len(keys)], 1_700_000_000+30*int64(i/len(keys))
				for j := range vals {
					vals[j].Counter = uint64(i*10 + j)
				}
				if _, _, err := s.Append(&e); err != nil {
					b.Fatal(err)
				}
				i++
			}
			for range keys { // the first cycle creates the segments: untimed
				poll()
			}
			b.ReportAllocs()
			cpu0, n := cpuTime(b), 0
			for b.Loop() {
				poll()
				n++
			}
			b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(n), "cpu-ns/op")
		})
	}
}
