package spool

import (
	"bytes"
	"errors"
	"fmt"
)

// A segment is a spool file of one key: one or more entries, back to back,
// each framed by its own header and checksum. A single-entry file (what
// Write publishes, and what every spool before segments holds) is a segment
// of one entry. Its name is the Ref of its first entry: the hash of its key
// and the poll time of its first entry, which is not after any entry in it.
//
// Reading a segment never gives up on the good entries because of bad bytes
// around them: a torn tail (an append cut short by a power loss), an entry
// whose checksum fails, or an entry of another key becomes a BadRange, and
// the entries before and after it are returned. The caller quarantines the
// bad ranges (QuarantineRange) before it removes the segment.

// MaxSegmentLen is the length of the largest segment file a reader accepts;
// a longer file is quarantined whole. Appends close a segment long before
// (Options.SegmentMaxBytes).
const MaxSegmentLen = 64 << 20

// Segment is what a read of a segment file found.
type Segment struct {
	Ref  Ref
	Path string
	// Entries are the good entries, in file order, and Offsets their
	// offsets in the file.
	Entries []Entry
	Offsets []int64
	// Bad are the byte ranges that are not good entries of the segment's
	// key, in file order.
	Bad []BadRange
	// Size is the file's length.
	Size int64

	data []byte // the file's bytes, for QuarantineRange
}

// BadRange is a run of bytes of a segment that is not a good entry.
type BadRange struct {
	Offset, Len int64
	Reason      string
}

// Bytes returns the bytes of r, a range of the segment.
func (g *Segment) Bytes(r BadRange) []byte { return g.data[r.Offset : r.Offset+r.Len] }

// EmptySegment is the reason of the one, empty, bad range of an empty
// segment file (a crash between its creation and its first write).
const EmptySegment = "empty segment: no entries"

// ParseSegment splits data, the content of the segment named ref, into its
// good entries and bad ranges. It never fails: what does not decode is a
// BadRange, and an empty file is one empty BadRange (EmptySegment), so a
// segment without good entries always has a bad range that says why.
func ParseSegment(ref Ref, data []byte) Segment {
	var arena valueArena
	return parseSegment(ref, data, &arena, nil, nil)
}

// ParseSegmentInto is ParseSegment taking the memory of the entries and
// their values from buf instead of allocating it: the Segment is the same,
// and valid until buf is Reset.
func ParseSegmentInto(ref Ref, data []byte, buf *SegmentBuffer) Segment {
	entries, offsets := buf.entries.rest(), buf.offsets.rest()
	g := parseSegment(ref, data, &buf.values, entries, offsets)
	buf.entries.keep(entries, g.Entries)
	buf.offsets.keep(offsets, g.Offsets)
	// Capped, so that an append to them never reaches into the next
	// segment's.
	g.Entries = g.Entries[:len(g.Entries):len(g.Entries)]
	g.Offsets = g.Offsets[:len(g.Offsets):len(g.Offsets)]
	return g
}

// parseSegment is ParseSegment appending the entries and offsets to the
// given (empty) slices and taking values from arena.
func parseSegment(ref Ref, data []byte, arena *valueArena, entries []Entry, offsets []int64) Segment {
	g := Segment{Ref: ref, Size: int64(len(data)), data: data, Entries: entries, Offsets: offsets}
	if len(data) == 0 {
		g.Bad = []BadRange{{Reason: EmptySegment}}
		return g
	}
	off := 0
	for off < len(data) {
		e, n, err := decodeNext(data[off:], arena)
		if err == nil {
			err = g.check(&e)
		}
		if err == nil {
			g.Entries = append(g.Entries, e)
			g.Offsets = append(g.Offsets, int64(off))
			off += n
			continue
		}
		if n > 0 { // framed and checked, but not this segment's
			g.bad(off, n, err)
			off += n
			continue
		}
		next := resync(data, off+1)
		g.bad(off, next-off, err)
		off = next
	}
	return g
}

// check reports why a good entry does not belong in the segment.
func (g *Segment) check(e *Entry) error {
	switch {
	case KeyHash(e.Key) != g.Ref.Hash:
		return corrupt(6, "entry of key %q (hash %016x) in a segment of hash %016x", e.Key, KeyHash(e.Key), g.Ref.Hash)
	case e.Time < g.Ref.Time:
		return corrupt(8, "entry at %d, before the segment's first poll time %d", e.Time, g.Ref.Time)
	}
	return nil
}

func (g *Segment) bad(off, n int, err error) {
	reason := err.Error()
	var ce *CorruptionError
	if errors.As(err, &ce) {
		reason = fmt.Sprintf("at offset %d: %s", int64(off)+ce.Offset, ce.Reason)
	}
	g.Bad = append(g.Bad, BadRange{Offset: int64(off), Len: int64(n), Reason: reason})
}

// resync returns the offset of the first entry at or after from that
// decodes, or len(data): where reading goes on after bad bytes.
func resync(data []byte, from int) int {
	for from < len(data) {
		i := bytes.Index(data[from:], []byte(Magic))
		if i < 0 {
			return len(data)
		}
		from += i
		if _, _, err := DecodeNext(data[from:]); err == nil {
			return from
		}
		from++
	}
	return len(data)
}

// ReadSegment reads the segment named r. A file that can never be read as
// a segment (not a regular file, unreadable, longer than MaxSegmentLen)
// gives a *CorruptionError; a missing one an error wrapping fs.ErrNotExist.
// Bad bytes inside a readable file are not an error: they are in the
// Segment's Bad ranges. The file is opened beneath the spool directory by
// its name: a level directory that is a symlink, or is reached through
// one, refuses the read with an error wrapping ErrSymlinkOnPath.
func (s *Spool) ReadSegment(r Ref) (Segment, error) { return s.ReadSegmentInto(r, nil) }

// ReadSegment is Spool.ReadSegment for a segment of the directory's hash.
func (d *Dir) ReadSegment(r Ref) (Segment, error) { return d.ReadSegmentInto(r, nil) }

// ReadSegmentInto is ReadSegment reading the file into buf and decoding
// it with ParseSegmentInto (nil buf: ReadSegment): the Segment is valid
// until buf is Reset.
func (d *Dir) ReadSegmentInto(r Ref, buf *SegmentBuffer) (Segment, error) {
	name, err := d.name(r)
	if err != nil {
		return Segment{}, err
	}
	return d.s.readSegment(d.fd, name, d.path+"/"+name, r, buf)
}

// ReadSegmentInto is Dir.ReadSegmentInto for any segment.
func (s *Spool) ReadSegmentInto(r Ref, buf *SegmentBuffer) (Segment, error) {
	return s.readSegment(s.rootfd, s.segmentRel(r), s.EntryPath(r), r, buf)
}

func (s *Spool) readSegment(dirfd int, name, path string, r Ref, buf *SegmentBuffer) (Segment, error) {
	var dst []byte
	if buf != nil {
		dst = buf.data.rest()
	}
	var data []byte
	var err error
	if mem, ok := s.mem.take(r); ok {
		data = append(dst[:0], mem...)
		s.mem.release(mem)
		s.c.segmentsFromMemory.Add(1)
	} else {
		data, err = s.readFile(dirfd, name, path, MaxSegmentLen, dst)
	}
	if err != nil {
		if errors.Is(err, ErrCorrupt) {
			s.c.corrupt.Add(1)
		} else {
			s.c.readErrors.Add(1)
		}
		return Segment{}, err
	}
	var g Segment
	if buf != nil {
		buf.data.keep(dst, data)
		g = ParseSegmentInto(r, data, buf)
	} else {
		g = ParseSegment(r, data)
	}
	g.Path = path
	s.c.read.Add(uint64(len(g.Entries)))
	s.c.segmentsRead.Add(1)
	if len(g.Bad) > 0 {
		s.c.corrupt.Add(1)
	}
	return g, nil
}
