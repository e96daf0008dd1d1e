package shm

import "slices"

// Helpers for ascending []int64 without duplicates.

// findTime returns where ts belongs in the pending times of st and whether
// it is already pending or in flight. Appending at the end, the common case,
// costs one comparison.
func (st *keyState) findTime(ts int64) (pos int, dup bool) {
	p := st.pending
	if n := len(p); n == 0 || p[n-1] < ts {
		pos = n
	} else if pos, dup = slices.BinarySearch(p, ts); dup {
		return pos, true
	}
	if st.inFlight() {
		_, dup = slices.BinarySearch(st.inflight, ts)
	}
	return pos, dup
}

// insertAt inserts ts at pos, appending in place when it fits.
func insertAt(times []int64, pos int, ts int64) []int64 {
	if pos == len(times) {
		return append(times, ts)
	}
	return slices.Insert(times, pos, ts)
}

// removeApplied removes from times, in place, every time that is in applied
// (in any order, duplicates allowed) and returns what is left.
func removeApplied(times, applied []int64) []int64 {
	if len(applied) == 0 {
		return times
	}
	if slices.Equal(times, applied) {
		return times[:0]
	}
	sorted := slices.IsSorted(applied)
	left := times[:0]
	for _, t := range times {
		var found bool
		if sorted {
			_, found = slices.BinarySearch(applied, t)
		} else {
			found = slices.Contains(applied, t)
		}
		if !found {
			left = append(left, t)
		}
	}
	return left
}

// mergeTimes merges src into dst; both are ascending and disjoint and must
// not share storage.
func mergeTimes(dst, src []int64) []int64 {
	n, m := len(dst), len(src)
	dst = slices.Grow(dst, m)[:n+m]
	i, j := n-1, m-1
	for k := n + m - 1; j >= 0; k-- {
		if i >= 0 && dst[i] > src[j] {
			dst[k] = dst[i]
			i--
		} else {
			dst[k] = src[j]
			j--
		}
	}
	return dst
}

// timesArena hands out copies of times for the batches of one Take call
// from a few shared allocations.
type timesArena struct{ buf []int64 }

// copyOf returns a copy of src with its capacity capped at its length, so
// that appending to it never reaches into another batch's times.
func (a *timesArena) copyOf(src []int64) []int64 {
	if cap(a.buf)-len(a.buf) < len(src) {
		a.buf = make([]int64, 0, max(len(src), 2*cap(a.buf), 16))
	}
	n := len(a.buf)
	a.buf = append(a.buf, src...)
	return a.buf[n:len(a.buf):len(a.buf)]
}
