package spool

import (
	"fmt"
	"slices"
	"testing"
	"time"

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

// benchSpool opens a spool in a temporary directory as the daemon opens
// it (level directories precreated), with set's changes to the default
// options; it is closed when the benchmark ends.
func benchSpool(b *testing.B, set func(*Options)) *Spool {
	opts := DefaultOptions()
	opts.Dir, opts.PrecreateDirs = b.TempDir(), true
	set(&opts)
	s, err := Open(opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
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
			s := benchSpool(b, func(o *Options) { o.SegmentOpenFiles = c.held })
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

// BenchmarkSegmentOpen is the step of an append that opens a segment not
// held, without the write: the open and close of a segment by its full
// path from the working directory (how the spool once opened it) against
// by its name beneath the spool directory's descriptor (openat2, how it
// opens it now), alternated segment by segment in one loop so that both
// see the same load. It reports the median of each, path-ns/op and
// beneath-ns/op (a median, since on a loaded machine a preemption lands in
// one of them now and then), and their ratio, beneath/path.
func BenchmarkSegmentOpen(b *testing.B) {
	s := benchSpool(b, func(o *Options) { o.SegmentOpenFiles = 0 })
	refs := make([]Ref, 16384)
	var err error
	for i := range refs {
		e := entryAt(fmt.Sprintf("router%03d/ifName=ge-0/0/%d", i/48, i%48), 1_700_000_000)
		if refs[i], _, err = s.Append(&e); err != nil {
			b.Fatal(err)
		}
	}
	const flags = unix.O_WRONLY | unix.O_APPEND | unix.O_NOFOLLOW | unix.O_CLOEXEC
	byPath := func(r Ref) (int, error) { return unix.Open(s.EntryPath(r), flags, 0) }
	beneath := func(r Ref) (int, error) { return s.openBeneath(s.segmentRel(r), flags, 0) }
	var took [2][]time.Duration
	i := 0
	for b.Loop() {
		r := refs[i%len(refs)]
		for k := range 2 {
			which := (i + k) % 2 // each first every other time
			open := byPath
			if which == 1 {
				open = beneath
			}
			t0 := time.Now()
			fd, err := open(r)
			if err != nil {
				b.Fatal(err)
			}
			unix.Close(fd)
			took[which] = append(took[which], time.Since(t0))
		}
		i++
	}
	path, ben := median(took[0]), median(took[1])
	b.ReportMetric(path, "path-ns/op")
	b.ReportMetric(ben, "beneath-ns/op")
	b.ReportMetric(ben/path, "beneath/path")
}

func median(d []time.Duration) float64 {
	slices.Sort(d)
	return float64(d[len(d)/2].Nanoseconds())
}

// BenchmarkReadSegment is the writer's read of a segment from disk, the
// case of a fleet whose segments outgrow --segment-memory: 16,384 keys'
// segments of three 10-counter entries each (a key's polls between two
// writes of its file), read back by ReadSegmentInto in turn, their files
// in the page cache, with no memory of the appends (MemoryBytes 0). It
// reports the process's CPU time per read, cpu-ns/op, as BenchmarkAppend.
func BenchmarkReadSegment(b *testing.B) {
	s := benchSpool(b, func(o *Options) { o.MemoryBytes = 0 })
	vals := make([]Value, 10)
	for i := range vals {
		vals[i] = Value{Name: fmt.Sprintf("ds%02d", i), Type: Counter, Counter: uint64(1000 * i)}
	}
	refs := make([]Ref, 16384)
	var err error
	for poll := range 3 {
		for i := range refs {
			e := Entry{Key: fmt.Sprintf("router%03d/ifName=ge-0/0/%d", i/48, i%48), Time: 1_700_000_000 + 30*int64(poll), Values: vals}
			if refs[i], _, err = s.Append(&e); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, r := range refs {
		s.Seal(r.Hash)
	}
	var buf SegmentBuffer
	b.ReportAllocs()
	cpu0, n := cpuTime(b), 0
	for b.Loop() {
		buf.Reset()
		g, err := s.ReadSegmentInto(refs[n%len(refs)], &buf)
		if err != nil {
			b.Fatal(err)
		}
		if len(g.Entries) != 3 {
			b.Fatalf("segment %s: %d entries, want 3", s.EntryPath(refs[n%len(refs)]), len(g.Entries))
		}
		n++
	}
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(n), "cpu-ns/op")
}
