package shm

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
)

// indexUnderTest is what the benchmark mix calls, so that the Index and the
// single-mutex baseline run exactly the same code around them.
type indexUnderTest interface {
	Add(hash uint64, key string, ts int64) (bool, error)
	TakeDue(now time.Time, due func(uint64, time.Time) time.Time, max int, dst []Batch) []Batch
	Done(hash uint64, applied []int64, retryAt time.Time)
}

// benchKey is a key of the benchmarks, named like the daemon's targets.
type benchKey struct {
	name string
	hash uint64
}

func benchKeys(n int) []benchKey {
	ks := make([]benchKey, n)
	for i := range ks {
		ks[i].name = fmt.Sprintf("router-%05d/ifTable", i)
		ks[i].hash = xxhash.Sum64String(ks[i].name)
	}
	return ks
}

// runMix runs b.N operations on ix from GOMAXPROCS goroutines and returns
// how long they took. Of every 8 operations, 6 add a new poll time of the
// next key (the poller), 1 adds a time again (the loader finding an entry
// the poller indexed) and 1 takes up to 4 due batches and ends each with
// Done (the writer).
func runMix(b *testing.B, ix indexUnderTest, keys []benchKey) time.Duration {
	var workers atomic.Int64
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		w := workers.Add(1)
		next := int(w) * 7919 // each worker polls the keys from its own place
		seq := int64(0)
		var bs []Batch
		for op := 0; pb.Next(); op++ {
			k := &keys[next%len(keys)]
			switch op % 8 {
			case 7:
				bs = ix.TakeDue(time.Now(), noDue, 4, bs[:0])
				for _, bt := range bs {
					ix.Done(bt.Hash, bt.Times, time.Time{})
				}
			case 6:
				ix.Add(k.hash, k.name, seq<<8|w)
			default:
				seq++
				next++
				ix.Add(k.hash, k.name, seq<<8|w) // unique per worker and key
			}
		}
	})
	return time.Since(start)
}

// BenchmarkIndex measures the operations per second of the sharded index
// under a parallel poller/loader/writer mix, and in the same run those of a
// simple single-mutex map doing the same work (x-mutex is the ratio) and of
// the same Index with one shard (x-1shard: what the lock striping alone
// gains). cpu-x is how much faster GOMAXPROCS goroutines do pure CPU work
// than one on this machine: the ceiling of any parallel speed-up here.
// ns/op and allocs/op are the sharded index's (timed over 2*b.N operations,
// reported per b.N).
//
// Use the default -benchtime (or at least 100000x): with a handful of
// iterations RunParallel cannot keep GOMAXPROCS goroutines busy and the
// numbers mean nothing.
func BenchmarkIndex(b *testing.B) {
	keys := benchKeys(10_000)
	b.ReportAllocs()
	b.StopTimer()
	newIndex := func(shards int) *Index {
		o := DefaultOptions()
		o.Shards = shards
		ix, err := New(o)
		if err != nil {
			b.Fatal(err)
		}
		return ix
	}
	mutex, oneShard, sharded := newMutexIndex(64<<20), newIndex(1), newIndex(DefaultOptions().Shards)
	// Run the three in the order A B C C B A, so that a load that changes
	// during the run (other processes, GC) weighs on each about equally.
	var tMutex, tOneShard, tSharded time.Duration
	for round := range 2 {
		if round == 0 {
			tMutex += runMix(b, mutex, keys)
			tOneShard += runMix(b, oneShard, keys)
		}
		b.StartTimer()
		tSharded += runMix(b, sharded, keys)
		b.StopTimer()
		if round == 1 {
			tOneShard += runMix(b, oneShard, keys)
			tMutex += runMix(b, mutex, keys)
		}
	}
	if b.N < 100_000 {
		b.Logf("b.N = %d is too small for a meaningful ratio; use -benchtime 1s", b.N)
	}
	ops := 2 * float64(b.N)
	b.ReportMetric(ops/tSharded.Seconds(), "ops/s")
	b.ReportMetric(ops/tMutex.Seconds(), "mutex-ops/s")
	b.ReportMetric(tMutex.Seconds()/tSharded.Seconds(), "x-mutex")
	b.ReportMetric(tOneShard.Seconds()/tSharded.Seconds(), "x-1shard")
	b.ReportMetric(cpuScaling(), "cpu-x")
}

// cpuScaling returns how much more pure CPU work GOMAXPROCS goroutines do
// in the same wall time as one goroutine.
func cpuScaling() float64 {
	work := func(n int) {
		x := uint64(n)
		for range 20_000_000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		runtime.KeepAlive(x)
	}
	t0 := time.Now()
	work(0)
	one := time.Since(t0)
	procs := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	t0 = time.Now()
	for p := range procs {
		wg.Go(func() { work(p) })
	}
	wg.Wait()
	return float64(procs) * one.Seconds() / time.Since(t0).Seconds()
}

// BenchmarkIndexMemory measures the heap of an index of 1,000,000 entries
// over 100,000 keys (ten poll cycles of 100,000 targets), against the 64 MiB
// default capacity.
func BenchmarkIndexMemory(b *testing.B) {
	const nKeys, cycles = 100_000, 10
	keys := benchKeys(nKeys)
	b.ReportAllocs()
	var heap, accounted float64
	for b.Loop() {
		h, st := indexHeap(b, keys, cycles)
		heap, accounted = float64(h), float64(st.Bytes)
		if st.Entries != nKeys*cycles || st.Keys != nKeys {
			b.Fatalf("index holds %d entries of %d keys; want %d of %d", st.Entries, st.Keys, nKeys*cycles, nKeys)
		}
	}
	b.ReportMetric(heap/(1<<20), "heap-MiB")
	b.ReportMetric(accounted/(1<<20), "accounted-MiB")
	b.ReportMetric(heap/(nKeys*cycles), "heap-B/entry")
}

// mutexIndex is the baseline: the same semantics as Index (duplicate and
// in-flight checks, collision check, exact byte budget, batches with
// copied times, requeue on Done) in one map behind one mutex.
type mutexIndex struct {
	mu       sync.Mutex
	keys     map[uint64]*mutexKey
	bytes    int64
	maxBytes int64
}

type mutexKey struct {
	key               string
	pending, inflight []int64
	since             time.Time
}

func newMutexIndex(maxBytes int64) *mutexIndex {
	return &mutexIndex{keys: map[uint64]*mutexKey{}, maxBytes: maxBytes}
}

func (m *mutexIndex) Add(hash uint64, key string, ts int64) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := m.keys[hash]
	need := int64(timeBytes)
	if k == nil {
		need += keyOverhead + int64(len(key))
	} else if key != "" && k.key != "" && k.key != key {
		return false, ErrCollision
	}
	if k != nil {
		if _, dup := slices.BinarySearch(k.inflight, ts); dup {
			return false, nil
		}
	}
	var pos int
	if k != nil {
		var dup bool
		if pos, dup = slices.BinarySearch(k.pending, ts); dup {
			return false, nil
		}
	}
	if m.bytes+need > m.maxBytes {
		return false, ErrFull
	}
	m.bytes += need
	if k == nil {
		k = &mutexKey{key: key}
		m.keys[hash] = k
	}
	if len(k.pending) == 0 {
		k.since = time.Now()
	}
	k.pending = slices.Insert(k.pending, pos, ts)
	return true, nil
}

func (m *mutexIndex) TakeDue(now time.Time, due func(uint64, time.Time) time.Time, max int, dst []Batch) []Batch {
	m.mu.Lock()
	defer m.mu.Unlock()
	for h, k := range m.keys {
		if len(dst) == max {
			break
		}
		if len(k.pending) == 0 || len(k.inflight) > 0 || due(h, k.since).After(now) {
			continue
		}
		dst = append(dst, Batch{Hash: h, Key: k.key, Times: slices.Clone(k.pending)})
		k.inflight, k.pending = k.pending, k.inflight[:0]
	}
	return dst
}

func (m *mutexIndex) Done(hash uint64, applied []int64, _ time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := m.keys[hash]
	if k == nil {
		return
	}
	left := removeApplied(k.inflight, applied)
	m.bytes -= int64(len(k.inflight)-len(left)) * timeBytes
	k.pending = mergeTimes(k.pending, left)
	k.inflight = k.inflight[:0]
	if len(k.pending) == 0 {
		m.bytes -= keyOverhead + int64(len(k.key))
		delete(m.keys, hash)
	}
}

// BenchmarkTakeDueNoneDue measures the writer's tick between two flushes:
// a TakeDue over 1,000,000 pending keys (2.4 million interfaces polled
// every 5 minutes with a 2-minute write delay hold about that many) of
// which none is due yet.
func BenchmarkTakeDueNoneDue(b *testing.B) {
	o := DefaultOptions()
	o.MaxBytes = 1 << 30
	ix, err := New(o)
	if err != nil {
		b.Fatal(err)
	}
	const keys = 1_000_000
	now := time.Unix(1_700_000_000, 0)
	for h := range uint64(keys) {
		if _, err := ix.Add(h*0x9e3779b97f4a7c15, "", now.Unix()); err != nil {
			b.Fatal(err)
		}
	}
	due := func(_ uint64, since time.Time) time.Time { return since.Add(2 * time.Minute) }
	ix.TakeDue(now, due, 16, nil) // the first sees every key
	b.ResetTimer()
	for i := range b.N {
		if got := ix.TakeDue(now.Add(time.Duration(i)*time.Millisecond), due, 16, nil); len(got) != 0 {
			b.Fatalf("took %d batches; want none due", len(got))
		}
	}
}
