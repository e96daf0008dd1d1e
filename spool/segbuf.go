package spool

// SegmentBuffer is the memory that ReadSegmentInto and ParseSegmentInto
// read and decode segments into, kept for the next reads: the file's
// bytes, the entries, their offsets and their values. A reader of many
// segments (the writer reads every pending segment of a file, file after
// file) reads all of one pass into one buffer, and Resets it when it is
// done with every Segment read into it; in the steady state a segment read
// then allocates nothing per entry or value. The strings of the entries
// (keys, value names) never point into the buffer: they stay valid after
// Reset, the slices (Entries, Offsets, Values, the bytes of the bad
// ranges) do not. A SegmentBuffer is not safe for concurrent use; its zero
// value is ready.
type SegmentBuffer struct {
	data    chunk[byte]
	entries chunk[Entry]
	offsets chunk[int64]
	values  valueArena
}

// Reset makes the memory of every Segment read into b free for the next
// reads. After a pass that needed more than b held, b grows to what it
// needed, so the next such pass fits at once; b lets go of more than
// about 4 MiB instead of keeping it (a backlog of one key, once).
func (b *SegmentBuffer) Reset() {
	b.data.reset(maxKeptBytes)
	b.entries.reset(maxKeptBytes / 64)
	b.offsets.reset(maxKeptBytes / 8)
	b.values.reset(maxKeptBytes / 40)
}

const maxKeptBytes = 4 << 20

// chunk is a slice handed out piece by piece: rest is the spare capacity
// after the pieces handed out, keep records the piece a caller appended to
// it (or the new slice append made when it did not fit).
type chunk[T any] struct {
	s    []T
	used int // elements handed out since the reset, in any slice
}

func (c *chunk[T]) rest() []T { return c.s[len(c.s):] }

// keep records got, what was appended to rest (start).
func (c *chunk[T]) keep(start, got []T) {
	c.used += len(got)
	if cap(got) == cap(start) { // appended in place
		c.s = c.s[:len(c.s)+len(got)]
		return
	}
	c.s = got
}

// reset hands out from the start again, in a chunk as large as what was
// handed out since the last reset, at most limit elements.
func (c *chunk[T]) reset(limit int) {
	switch {
	case c.used > limit:
		c.s = nil
	case c.used > cap(c.s):
		c.s = make([]T, 0, c.used)
	default:
		c.s = c.s[:0]
	}
	c.used = 0
}
