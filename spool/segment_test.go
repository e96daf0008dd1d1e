package spool

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func entryAt(key string, t int64) Entry {
	return Entry{Key: key, Time: t, Milli: uint16(t % 1000), Values: []Value{{Name: "in", Type: Counter, Counter: uint64(t) * 7}}}
}

func TestAppendBuildsOneSegmentPerKeyUntilSealed(t *testing.T) {
	for _, policy := range []FsyncPolicy{FsyncNone, FsyncAlways} {
		t.Run(policy.String(), func(t *testing.T) {
			s := openTest(t, t.TempDir(), policy)
			var want []Entry
			var first Ref
			for i := int64(0); i < 5; i++ {
				e := entryAt("router1", 1000+i)
				ref, created, err := s.Append(&e)
				if err != nil {
					t.Fatal(err)
				}
				if created != (i == 0) {
					t.Fatalf("append %d: created = %v", i, created)
				}
				if i == 0 {
					first = ref
				} else if ref != first {
					t.Fatalf("append %d went to %s, want the open segment %s", i, ref, first)
				}
				want = append(want, e)
			}
			g, err := s.ReadSegment(first)
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Bad) != 0 || !reflect.DeepEqual(g.Entries, want) {
				t.Fatalf("segment = %+v bad %+v, want the 5 entries", g.Entries, g.Bad)
			}
			s.Seal(first.Hash)
			e := entryAt("router1", 2000)
			ref, created, err := s.Append(&e)
			if err != nil || !created || ref.Time != 2000 {
				t.Fatalf("append after Seal = %s, %v, %v; want a new segment at 2000", ref, created, err)
			}
			if g2, _ := s.ReadSegment(first); len(g2.Entries) != 5 {
				t.Fatalf("the sealed segment has %d entries, want 5", len(g2.Entries))
			}
			if st := s.Stats(); st.SegmentsCreated != 2 || st.Appended != 4 || st.Written != 6 || st.SegmentsClosed != 1 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

func TestAppendClosesAtTheLimits(t *testing.T) {
	for _, tc := range []struct {
		name              string
		maxBytes          int64
		maxEntries, wantN int
	}{
		{"entries=3", 1 << 20, 3, 3},
		{"entries=1 (one file per poll)", 1 << 20, 1, 1},
		{"bytes=4096", 4096, 1024, 4096 / (entryLen(t))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Dir, opts.SegmentMaxBytes, opts.SegmentMaxEntries = t.TempDir(), tc.maxBytes, tc.maxEntries
			s, err := Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			segs := map[Ref]int{}
			for i := int64(0); i < 20; i++ {
				e := entryAt("sw", 100+i)
				ref, _, err := s.Append(&e)
				if err != nil {
					t.Fatal(err)
				}
				segs[ref]++
			}
			for ref, n := range segs {
				if n > tc.wantN {
					t.Errorf("segment %s holds %d entries, limit %d", ref, n, tc.wantN)
				}
				g, err := s.ReadSegment(ref)
				if err != nil || len(g.Entries) != n || g.Size > tc.maxBytes {
					t.Errorf("segment %s: %d entries, %d bytes, %v", ref, len(g.Entries), g.Size, err)
				}
			}
			if want := (20 + tc.wantN - 1) / tc.wantN; len(segs) != want {
				t.Errorf("%d segments, want %d", len(segs), want)
			}
		})
	}
}

func entryLen(t *testing.T) int {
	e := entryAt("sw", 100)
	return e.EncodedLen()
}

func TestAppendRefusesASecondEntryOfTheSameSecond(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNone)
	e := entryAt("r", 50)
	ref, _, err := s.Append(&e)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Append(&e); !errors.Is(err, ErrDuplicateTime) {
		t.Fatalf("second append of the same second: %v, want ErrDuplicateTime", err)
	}
	if _, err := s.Write(&e); !errors.Is(err, ErrDuplicateTime) {
		t.Fatalf("Write over a segment: %v, want ErrDuplicateTime (never replaced)", err)
	}
	if g, _ := s.ReadSegment(ref); len(g.Entries) != 1 || len(g.Bad) != 0 {
		t.Fatalf("segment after refused writes: %+v", g)
	}
	// A new process (after a restart within the second) may not append
	// to the closed segment of that second: its segment takes the latest
	// free second before, a lower bound of its entries' times.
	s.Seal(ref.Hash)
	later := e
	later.Milli++
	r2, created, err := s.Append(&later)
	if err != nil || !created || r2.Time != ref.Time-1 {
		t.Fatalf("append after a restart in the same second = %s, %v, %v; want a new segment named %d", r2, created, err, ref.Time-1)
	}
	if g, _ := s.ReadSegment(r2); len(g.Entries) != 1 || len(g.Bad) != 0 || g.Entries[0].Milli != later.Milli {
		t.Fatalf("the new segment %+v", g)
	}
}

func TestAppendAfterAClockStepBackStartsANewSegment(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNone)
	a, b := entryAt("r", 500), entryAt("r", 400)
	ra, _, _ := s.Append(&a)
	rb, created, err := s.Append(&b)
	if err != nil || !created || rb.Time != 400 || ra.Time != 500 {
		t.Fatalf("append of an older entry = %s, %v, %v; want a new segment at 400", rb, created, err)
	}
}

// TestSegmentKeepsGoodEntriesAroundBadBytes: a torn tail, a flipped byte in
// a middle entry and an entry of another key each become one bad range,
// and every good entry before and after is read.
func TestSegmentKeepsGoodEntriesAroundBadBytes(t *testing.T) {
	enc := func(e Entry) []byte {
		b, err := e.AppendEncode(nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	e1, e2, e3 := entryAt("k", 10), entryAt("k", 20), entryAt("k", 30)
	ref := e1.Ref()
	flipped := enc(e2)
	flipped[len(flipped)/2] ^= 0x40
	cases := []struct {
		name       string
		data       []byte
		want       []Entry
		badOffsets []int64
		reason     string
	}{
		{"torn tail", cat(enc(e1), enc(e2), enc(e3)[:17]), []Entry{e1, e2}, []int64{int64(2 * len(enc(e1)))}, "torn"},
		{"torn header", cat(enc(e1), []byte("SPL")), []Entry{e1}, []int64{int64(len(enc(e1)))}, "torn"},
		{"bad middle entry", cat(enc(e1), flipped, enc(e3)), []Entry{e1, e3}, []int64{int64(len(enc(e1)))}, "checksum mismatch"},
		{"garbage in the middle", cat(enc(e1), []byte("garbage!"), enc(e3)), []Entry{e1, e3}, []int64{int64(len(enc(e1)))}, "bad magic"},
		{"entry of another key", cat(enc(e1), enc(entryAt("other", 15)), enc(e3)), []Entry{e1, e3}, []int64{int64(len(enc(e1)))}, "in a segment of hash"},
		{"entry before the name", cat(enc(e1), enc(entryAt("k", 5)), enc(e3)), []Entry{e1, e3}, []int64{int64(len(enc(e1)))}, "before the segment's first poll time"},
		{"all bad", []byte("not a segment at all"), nil, []int64{0}, "bad magic"},
		{"out of order is kept", cat(enc(e1), enc(e3), enc(e2)), []Entry{e1, e3, e2}, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := ParseSegment(ref, tc.data)
			if !reflect.DeepEqual(g.Entries, tc.want) {
				t.Fatalf("entries %+v, want %+v", g.Entries, tc.want)
			}
			var offs []int64
			covered := int64(0)
			for _, r := range g.Bad {
				offs = append(offs, r.Offset)
				covered += r.Len
				if !strings.Contains(r.Reason, tc.reason) {
					t.Errorf("bad range reason %q, want it to say %q", r.Reason, tc.reason)
				}
			}
			if !reflect.DeepEqual(offs, tc.badOffsets) {
				t.Fatalf("bad ranges at %v, want %v (%+v)", offs, tc.badOffsets, g.Bad)
			}
			good := int64(0)
			for _, e := range g.Entries {
				good += int64(e.EncodedLen())
			}
			if good+covered != int64(len(tc.data)) {
				t.Fatalf("good %d + bad %d bytes != %d: some bytes are neither applied nor quarantined", good, covered, len(tc.data))
			}
		})
	}
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// FuzzParseSegment: whatever the bytes, every byte of a segment is either
// in a good entry of its key or in a bad range, in order and without
// overlap, and every good entry re-encodes to its bytes; a parse into a
// reused SegmentBuffer finds the same.
func FuzzParseSegment(f *testing.F) {
	e1, e2 := entryAt("k", 10), entryAt("k", 20)
	b1, _ := e1.AppendEncode(nil)
	b2, _ := e2.AppendEncode(nil)
	f.Add(cat(b1, b2))
	f.Add(cat(b1, b2[:10]))
	f.Add(cat(b1, []byte("xxSPLD"), b2))
	f.Add([]byte{})
	ref := e1.Ref()
	// One buffer for every input, dirtied by the one before: what a
	// parse into a reused buffer finds is what ParseSegment finds.
	var buf SegmentBuffer
	f.Fuzz(func(t *testing.T, data []byte) {
		g := ParseSegment(ref, data)
		buf.Reset()
		ParseSegmentInto(ref, cat(b2, b1), &buf)
		sameSegment(t, ParseSegmentInto(ref, data, &buf), g)
		if len(data) == 0 {
			if len(g.Bad) != 1 || g.Bad[0].Reason != EmptySegment || len(g.Entries) != 0 {
				t.Fatalf("empty segment: %+v", g)
			}
			return
		}
		off := int64(0)
		ei, bi := 0, 0
		for off < int64(len(data)) {
			switch {
			case ei < len(g.Offsets) && g.Offsets[ei] == off:
				e := g.Entries[ei]
				b, err := e.AppendEncode(nil)
				if err != nil || string(b) != string(data[off:off+int64(len(b))]) {
					t.Fatalf("entry at %d does not re-encode to its bytes", off)
				}
				if KeyHash(e.Key) != ref.Hash || e.Time < ref.Time {
					t.Fatalf("entry at %d does not belong: %+v", off, e)
				}
				off += int64(len(b))
				ei++
			case bi < len(g.Bad) && g.Bad[bi].Offset == off && g.Bad[bi].Len > 0:
				off += g.Bad[bi].Len
				bi++
			default:
				t.Fatalf("byte %d is in no entry and no bad range: %+v", off, g)
			}
		}
		if off != int64(len(data)) || ei != len(g.Entries) || bi != len(g.Bad) {
			t.Fatalf("ranges overrun: off %d of %d", off, len(data))
		}
	})
}
