package spool

import (
	"fmt"
	"testing"
)

// wideEntry is a poll of 40 counters, as one RRD file of the writer's
// benchmark holds.
func wideEntry(key string, t int64) Entry {
	e := Entry{Key: key, Time: t}
	for i := range 40 {
		e.Values = append(e.Values, Value{Name: fmt.Sprintf("ds%d", i), Type: Counter, Counter: uint64(t) * uint64(i)})
	}
	return e
}

// sameSegment fails unless g and want have the same entries (by their
// encodings: a NaN gauge is not equal to itself), offsets and bad ranges.
func sameSegment(t *testing.T, g, want Segment) {
	t.Helper()
	if len(g.Entries) != len(want.Entries) || len(g.Bad) != len(want.Bad) || g.Size != want.Size {
		t.Fatalf("%d entries, %d bad ranges, %d bytes; want %d, %d, %d", len(g.Entries), len(g.Bad), g.Size, len(want.Entries), len(want.Bad), want.Size)
	}
	for i := range g.Entries {
		a, _ := g.Entries[i].AppendEncode(nil)
		b, _ := want.Entries[i].AppendEncode(nil)
		if string(a) != string(b) || g.Offsets[i] != want.Offsets[i] {
			t.Fatalf("entry %d: %+v at %d, want %+v at %d", i, g.Entries[i], g.Offsets[i], want.Entries[i], want.Offsets[i])
		}
	}
	for i := range g.Bad {
		if g.Bad[i] != want.Bad[i] || string(g.Bytes(g.Bad[i])) != string(want.Bytes(want.Bad[i])) {
			t.Fatalf("bad range %d: %+v, want %+v", i, g.Bad[i], want.Bad[i])
		}
	}
}

// TestSegmentBufferReadsAsReadSegment: segments read one after another
// into one buffer, with resets between passes, are what ReadSegment reads,
// and stay so while later segments of the pass are read into the buffer
// (the writer holds every segment of a file until it is written).
func TestSegmentBufferReadsAsReadSegment(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNone)
	var refs []Ref
	for k := range 3 {
		key := fmt.Sprintf("router%d", k)
		for i := range int64(12) {
			e := wideEntry(key, 1000+300*i)
			ref, _, err := s.Append(&e)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				refs = append(refs, ref)
			}
		}
		s.Seal(refs[k].Hash)
	}
	var buf SegmentBuffer
	for pass := range 3 {
		var got []Segment
		for _, r := range refs {
			d, err := s.OpenDir(r.Hash)
			if err != nil {
				t.Fatal(err)
			}
			g, err := d.ReadSegmentInto(r, &buf)
			d.Close()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, g)
		}
		for i, r := range refs {
			want, err := s.ReadSegment(r)
			if err != nil {
				t.Fatal(err)
			}
			if len(want.Entries) != 12 {
				t.Fatalf("pass %d: %d entries in %s, want 12", pass, len(want.Entries), r)
			}
			sameSegment(t, got[i], want)
		}
		buf.Reset()
	}
}

// TestSegmentBufferReadAllocatesNothingPerValue: once a buffer has held a
// pass, reading a segment of 12 entries of 40 values into it again takes a
// few allocations for the file's path, none per entry or value (ReadSegment
// takes one per entry and a slab of values per segment).
func TestSegmentBufferReadAllocatesNothingPerValue(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNone)
	var ref Ref
	for i := range int64(12) {
		e := wideEntry("router1", 1000+300*i)
		r, _, err := s.Append(&e)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			ref = r
		}
	}
	s.Seal(ref.Hash)
	d, err := s.OpenDir(ref.Hash)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var buf SegmentBuffer
	read := func() {
		buf.Reset()
		if g, err := d.ReadSegmentInto(ref, &buf); err != nil || len(g.Entries) != 12 {
			t.Fatalf("read %s: %d entries, %v", ref, len(g.Entries), err)
		}
	}
	read()
	if n := testing.AllocsPerRun(20, read); n > 3 {
		t.Fatalf("%.0f allocations a read into a warm buffer, want at most 3 (the name and path)", n)
	}
	data := make([]byte, 0, 1<<14)
	for i := range int64(12) {
		e := wideEntry("router1", 1000+300*i)
		data, _ = e.AppendEncode(data)
	}
	if n := testing.AllocsPerRun(20, func() { buf.Reset(); ParseSegmentInto(ref, data, &buf) }); n != 0 {
		t.Fatalf("%.0f allocations a parse into a warm buffer, want none", n)
	}
}
