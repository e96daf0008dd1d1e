package shm

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// BenchmarkHeapPerPendingPoll measures the index's heap per pending poll
// for 10,000 targets with 12 polls each (one hour of 5-minute polls, the
// default write window), both ways in the same run:
//
//   - before segments, one spool file per poll: the index held every poll
//     time, 12 per target (heap-B/poll-file);
//   - with segments: the 12 polls of a target are one segment, and the
//     index holds one time per segment (heap-B/poll-seg).
//
// x-heap is file over seg; accounted-B/poll-* are the index's own
// accounting (Stats.Bytes) of the same.
func BenchmarkHeapPerPendingPoll(b *testing.B) {
	const targets, polls = 10_000, 12
	keys := make([]benchKey, targets)
	for i := range keys {
		keys[i].name = fmt.Sprintf("dev%05d", i) // the poller's target names
		keys[i].hash = xxhash.Sum64String(keys[i].name)
	}
	var fileHeap, segHeap uint64
	var fileSt, segSt Stats
	for b.Loop() {
		// A B B A: a heap that drifts during the run weighs on both.
		f1, st := indexHeap(b, keys, polls)
		s1, _ := indexHeap(b, keys, 1)
		s2, sst := indexHeap(b, keys, 1)
		f2, _ := indexHeap(b, keys, polls)
		fileHeap, segHeap, fileSt, segSt = (f1+f2)/2, (s1+s2)/2, st, sst
	}
	if fileSt.Entries != targets*polls || segSt.Entries != targets || fileSt.Keys != targets || segSt.Keys != targets {
		b.Fatalf("indexes hold %d and %d entries of %d and %d keys; want %d and %d of %d",
			fileSt.Entries, segSt.Entries, fileSt.Keys, segSt.Keys, targets*polls, targets, targets)
	}
	const pending = targets * polls
	b.ReportMetric(float64(fileHeap)/pending, "heap-B/poll-file")
	b.ReportMetric(float64(segHeap)/pending, "heap-B/poll-seg")
	b.ReportMetric(float64(fileHeap)/float64(segHeap), "x-heap")
	b.ReportMetric(float64(fileHeap)/(1<<20), "heap-MiB-file")
	b.ReportMetric(float64(segHeap)/(1<<20), "heap-MiB-seg")
	b.ReportMetric(float64(fileSt.Bytes)/pending, "accounted-B/poll-file")
	b.ReportMetric(float64(segSt.Bytes)/pending, "accounted-B/poll-seg")
}

// indexHeap builds an index of cycles poll times of every key (cycle by
// cycle, as the poller adds them, 300 s apart) and returns its heap
// (runtime.MemStats.HeapAlloc after a GC with the index alive, minus the
// same before it was built; the keys are built by the caller, as the
// poller's target names are) and its stats.
func indexHeap(b *testing.B, keys []benchKey, cycles int64) (uint64, Stats) {
	b.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix, err := New(DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	for c := range cycles {
		for _, k := range keys {
			if _, err := ix.Add(k.hash, k.name, 1_700_000_000+300*c); err != nil {
				b.Fatal(err)
			}
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	st := ix.Stats()
	runtime.KeepAlive(ix)
	return after.HeapAlloc - before.HeapAlloc, st
}
