package rrdwriter

import (
	"math"
	"time"

	"github.com/spoold/spoold/shm"
)

// due is the flush policy handed to shm.TakeDue (run in own, with tb): a
// target is due WriteDelay plus its jitter after its oldest pending entry
// arrived.
func (w *Writer) due(tb *table, hash uint64, since time.Time) time.Time {
	if w.o.Ready != nil && !w.o.Ready.Ready(hash) || tb.blocked(hash) {
		return shm.NotReady
	}
	return since.Add(w.o.WriteDelay + w.jitter(hash, since))
}

// jitter returns a pseudo-random duration in [0, WriteJitter), fixed for a
// target's batch (hash and since) so that it does not change between the
// calls of TakeDue, and different for each target and batch.
func (w *Writer) jitter(hash uint64, since time.Time) time.Duration {
	if w.o.WriteJitter <= 0 {
		return 0
	}
	return time.Duration(splitmix64(hash^uint64(since.UnixNano())) % uint64(w.o.WriteJitter))
}

// splitmix64 is the finalizer of SplitMix64: a cheap, well-mixed hash.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// limiter spaces file starts by interval, allowing a burst of one second's
// worth (at least one). The zero interval allows everything. It is the
// table's (owner.go).
type limiter struct {
	interval time.Duration
	burst    int
	next     time.Time // when the next start is allowed
}

func newLimiter(rate float64) limiter {
	if rate <= 0 {
		return limiter{}
	}
	return limiter{
		interval: time.Duration(float64(time.Second) / rate),
		burst:    max(1, int(math.Floor(rate))),
	}
}

// allow returns how many of want starts are allowed at now.
func (l *limiter) allow(now time.Time, want int) int {
	if l.interval == 0 || want <= 0 {
		return max(want, 0)
	}
	if floor := now.Add(-time.Duration(l.burst-1) * l.interval); l.next.Before(floor) {
		l.next = floor
	}
	if l.next.After(now) {
		return 0
	}
	return min(want, int(now.Sub(l.next)/l.interval)+1)
}

// spend records n starts.
func (l *limiter) spend(n int) {
	if l.interval != 0 {
		l.next = l.next.Add(time.Duration(n) * l.interval)
	}
}

// wait returns how long until the next start is allowed (0: now).
func (l *limiter) wait(now time.Time) time.Duration {
	if l.interval == 0 || !l.next.After(now) {
		return 0
	}
	return l.next.Sub(now)
}
