package spool

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openFDs counts the process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestAppendHoldsAtMostSegmentOpenFiles: open segments keep their
// descriptors between appends up to SegmentOpenFiles (rounded up to a
// share per shard), every entry still lands in its segment, and Close
// releases them all. With room for every key, each keeps its descriptor
// until it is sealed, in any order.
func TestAppendHoldsAtMostSegmentOpenFiles(t *testing.T) {
	for _, limit := range []int{0, 64, 128, 2000} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			opts := DefaultOptions()
			opts.Dir, opts.SegmentOpenFiles = t.TempDir(), limit
			s, err := Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			before := openFDs(t)
			const keys, rounds = 1000, 3
			refs := map[string]Ref{}
			for r := int64(0); r < rounds; r++ {
				for k := range keys {
					e := entryAt(fmt.Sprintf("dev%d", k), 1000+r)
					ref, _, err := s.Append(&e)
					if err != nil {
						t.Fatal(err)
					}
					refs[e.Key] = ref
				}
			}
			perShard := (limit + appendShards - 1) / appendShards
			if held := openFDs(t) - before; held > perShard*appendShards || limit > 0 && held < limit/2 {
				t.Fatalf("%d descriptors held with SegmentOpenFiles %d, want at most %d (and some)", held, limit, perShard*appendShards)
			}
			if limit >= 2*keys {
				if held := openFDs(t) - before; held != keys {
					t.Fatalf("%d descriptors held with room for %d; want one for each of the %d keys", held, limit, keys)
				}
				for k := 0; k < keys; k += 2 { // every other: from the middle of each shard's list
					s.Seal(KeyHash(fmt.Sprintf("dev%d", k)))
				}
				if held := openFDs(t) - before; held != keys/2 {
					t.Fatalf("%d descriptors held after sealing half the keys; want %d", held, keys/2)
				}
			}
			for key, ref := range refs {
				g, err := s.ReadSegment(ref)
				if err != nil {
					t.Fatal(err)
				}
				if len(g.Entries) != rounds || len(g.Bad) != 0 {
					t.Fatalf("%s: %d entries, bad %v; want %d", key, len(g.Entries), g.Bad, rounds)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if after := openFDs(t); after > before-4 { // Close also closes the lock and the spool's directories
				t.Fatalf("%d descriptors open after Close, %d before the appends", after, before)
			}
		})
	}
}

// TestAppendToAHeldSegmentRemovedByAnother: an operator's rm of a segment
// whose descriptor spoold holds is found before the next write, which is
// refused as an append to a missing segment is (nothing goes into a file
// no name reaches); the entry after it starts a new segment.
func TestAppendToAHeldSegmentRemovedByAnother(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNone)
	e := entryAt("router1", 1000)
	ref, _, err := s.Append(&e)
	if err != nil {
		t.Fatal(err)
	}
	e = entryAt("router1", 1001)
	if _, _, err := s.Append(&e); err != nil { // opens and holds the descriptor
		t.Fatal(err)
	}
	if err := os.Remove(s.EntryPath(ref)); err != nil {
		t.Fatal(err)
	}
	e = entryAt("router1", 1002)
	if _, _, err := s.Append(&e); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("append to a removed held segment: %v, want an error wrapping ErrNotExist", err)
	}
	e = entryAt("router1", 1003)
	ref2, created, err := s.Append(&e)
	if err != nil || !created || ref2.Time != 1003 {
		t.Fatalf("next append = %s, %v, %v; want a new segment at 1003", ref2, created, err)
	}
	g, err := s.ReadSegment(ref2)
	if err != nil || len(g.Entries) != 1 || g.Entries[0].Time != 1003 {
		t.Fatalf("new segment: %+v, %v", g, err)
	}
}

// TestSealNamesKeepsNamesFromNewSegments: while a reader holds a key's
// names (SealNames), a new segment of the key never takes one of them,
// even after the reader removed that segment: it is named the latest
// free second before; after Unseal the name is free again.
func TestSealNamesKeepsNamesFromNewSegments(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNone)
	e := entryAt("router1", 1000)
	ref, _, err := s.Append(&e)
	if err != nil {
		t.Fatal(err)
	}
	s.SealNames(ref.Hash, []int64{ref.Time})
	if err := s.Remove(ref); err != nil { // the reader applied and removed it
		t.Fatal(err)
	}
	e = entryAt("router1", 1000)
	e.Milli = 500 // the next poll, in the same second
	ref2, created, err := s.Append(&e)
	if err != nil || !created || ref2.Time != 999 {
		t.Fatalf("append while the name is held = %s, %v, %v; want a new segment named 999", ref2, created, err)
	}
	s.Unseal(ref.Hash)
	s.Seal(ref.Hash)
	e = entryAt("router1", 1000)
	e.Milli = 700
	ref3, created, err := s.Append(&e)
	if err != nil || !created || ref3.Time != 1000 {
		t.Fatalf("append after Unseal = %s, %v, %v; want a new segment named 1000", ref3, created, err)
	}
}

// TestHeldDescriptorClosedElsewhere: a held descriptor closed behind the
// spool's back, its number reused for another file, is found before the
// next write: the entry goes into its segment, never into the other file.
func TestHeldDescriptorClosedElsewhere(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, filepath.Join(dir, "spool"), FsyncNone)
	for ts := int64(1000); ts < 1002; ts++ { // the second append holds the descriptor
		e := entryAt("router1", ts)
		if _, _, err := s.Append(&e); err != nil {
			t.Fatal(err)
		}
	}
	hash := KeyHash("router1")
	sh := s.app.shard(hash)
	seg := sh.open[hash]
	if !seg.held() {
		t.Fatal("the open segment's descriptor is not held")
	}
	if err := unix.Close(seg.fd); err != nil { // a stray close elsewhere
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	fd, err := unix.Open(other, unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if fd != seg.fd {
		t.Skipf("the descriptor number %d was not reused (got %d)", seg.fd, fd)
	}
	e := entryAt("router1", 1002)
	if _, created, err := s.Append(&e); err != nil || created {
		t.Fatalf("append after the stray close: created %v, %v; want an append to the open segment", created, err)
	}
	if fi, err := os.Stat(other); err != nil || fi.Size() != 0 {
		t.Fatalf("the other file: %v, %v; want it empty", fi.Size(), err)
	}
	g, err := s.ReadSegment(seg.ref)
	if err != nil || len(g.Entries) != 3 || len(g.Bad) != 0 {
		t.Fatalf("segment: %d entries, bad %v, %v; want 3", len(g.Entries), g.Bad, err)
	}
}

// writeCalls returns the write system calls of the calling thread so far:
// the caller locks its goroutine to its thread (runtime.LockOSThread).
// The process's count would take in the Go runtime's own writes on other
// threads (the eventfd that wakes the network poller), which come at any
// time.
func writeCalls(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/thread-self/io")
	if err != nil {
		t.Skipf("no /proc/thread-self/io: %v", err)
	}
	var n int64
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "syscw: "); ok {
			n, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return n
}

// TestAppendRunIsOneWrite: a run of entries of one key goes into its open
// segment, or the new segment it starts, with one write, as the same
// entries appended one by one would (the same segment, the same bytes);
// it stops at an entry Append would refuse, with the entries before it
// appended.
func TestAppendRunIsOneWrite(t *testing.T) {
	runtime.LockOSThread() // writeCalls counts this thread's
	defer runtime.UnlockOSThread()
	one := openTest(t, filepath.Join(t.TempDir(), "one"), FsyncNone)
	run := openTest(t, filepath.Join(t.TempDir(), "run"), FsyncNone)
	var es []Entry
	for ts := int64(1000); ts < 1014; ts++ {
		es = append(es, entryAt("router1", ts))
	}
	for i := range es {
		if _, _, err := one.Append(&es[i]); err != nil {
			t.Fatal(err)
		}
	}
	before := writeCalls(t)
	n, created, err := run.AppendRun(es[:2], nil) // creates the segment and holds its descriptor
	if n != 2 || len(created) != 1 || err != nil {
		t.Fatalf("AppendRun of 2 = %d, %v, %v; want 2, one segment created", n, created, err)
	}
	if w := writeCalls(t) - before; w != 1 {
		t.Fatalf("AppendRun of 2 starting a segment made %d write calls; want 1", w)
	}
	if st := run.Stats(); st.SegmentsCreated != 1 || st.Appended != 1 || st.Written != 2 {
		t.Fatalf("stats after the new segment's run: %+v; want 1 created, 1 appended, 2 written", st)
	}
	before = writeCalls(t)
	n, created, err = run.AppendRun(es[2:], created[:0])
	if n != 12 || len(created) != 0 || err != nil {
		t.Fatalf("AppendRun of 12 = %d, %v, %v; want 12 appended to the open segment", n, created, err)
	}
	if w := writeCalls(t) - before; w != 1 {
		t.Fatalf("AppendRun of 12 made %d write calls; want 1", w)
	}
	ref := Ref{Hash: KeyHash("router1"), Time: 1000}
	a, errA := os.ReadFile(one.EntryPath(ref))
	b, errB := os.ReadFile(run.EntryPath(ref))
	if errA != nil || errB != nil || !bytes.Equal(a, b) {
		t.Fatalf("the run's segment differs from the appends': %d and %d bytes, %v, %v", len(a), len(b), errA, errB)
	}
	again := []Entry{entryAt("router1", 1014), entryAt("router1", 1014), entryAt("router1", 1015)} // the second twice: refused
	n, _, err = run.AppendRun(again, nil)
	if n != 1 || !errors.Is(err, ErrDuplicateTime) {
		t.Fatalf("AppendRun with a duplicate second = %d, %v; want 1 appended, then ErrDuplicateTime", n, err)
	}
}

// TestSegmentsReadFromMemory: a segment this process appended is read
// back from memory, entry for entry what its file holds, without the file
// (counted); within MemoryBytes only (a segment past the bound is read
// from disk, entry for entry the same); and the memory is given back once
// the segments are read, or removed unread. Another process (a restart)
// reads the same segments from disk.
func TestSegmentsReadFromMemory(t *testing.T) {
	for _, tc := range []struct {
		name       string
		memory     int64
		fromMemory func(n int) bool
	}{
		{"off", 0, func(n int) bool { return n == 0 }},
		{"room for all", 64 << 20, func(n int) bool { return n == 100 }},
		{"room for some", 2 << 10, func(n int) bool { return n > 0 && n < 100 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.Dir, opts.MemoryBytes = t.TempDir(), tc.memory
			s, err := Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			var refs []Ref
			for k := range 100 {
				for r := range int64(3) {
					e := entryAt(fmt.Sprintf("dev%d", k), 1000+r)
					ref, created, err := s.Append(&e)
					if err != nil {
						t.Fatal(err)
					}
					if created {
						refs = append(refs, ref)
					}
				}
				if used := s.Stats().MemoryBytes; used > tc.memory {
					t.Fatalf("%d bytes kept in memory; bound %d", used, tc.memory)
				}
			}
			for _, ref := range refs[:50] {
				s.Seal(ref.Hash)
			}
			var buf SegmentBuffer
			for _, ref := range refs[:50] {
				g, err := s.ReadSegmentInto(ref, &buf)
				if err != nil {
					t.Fatal(err)
				}
				disk, err := os.ReadFile(s.EntryPath(ref))
				if err != nil {
					t.Fatal(err)
				}
				d := ParseSegment(ref, disk)
				if len(g.Entries) != 3 || len(g.Bad) != 0 || fmt.Sprint(g.Entries) != fmt.Sprint(d.Entries) || g.Size != d.Size {
					t.Fatalf("%s read as %d entries (bad %v); the file has %d: %v", ref, len(g.Entries), g.Bad, len(d.Entries), d.Entries)
				}
			}
			for _, ref := range refs[50:] { // sealed and removed unread
				s.Seal(ref.Hash)
				if err := s.Remove(ref); err != nil {
					t.Fatal(err)
				}
			}
			st := s.Stats()
			if !tc.fromMemory(int(st.SegmentsFromMemory) * 2) {
				t.Fatalf("%d of 50 segments read from memory with a bound of %d bytes", st.SegmentsFromMemory, tc.memory)
			}
			if st.MemoryBytes != 0 {
				t.Fatalf("%d bytes still kept once every segment is read or removed", st.MemoryBytes)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			again, err := Open(opts)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			g, err := again.ReadSegmentInto(refs[0], &buf)
			if err != nil || len(g.Entries) != 3 || again.Stats().SegmentsFromMemory != 0 {
				t.Fatalf("after a restart: %d entries, err %v, %d from memory; want 3 from disk", len(g.Entries), err, again.Stats().SegmentsFromMemory)
			}
		})
	}
}

// TestHeldDescriptorsServeTheirKeysEveryCycle: with more keys than
// descriptors, appended to once a cycle in the same order (the poller's
// order), the keys whose segments got a descriptor keep it and append
// without an open every cycle: only the others open their segment by name
// (spoold_spool_segment_opens_total). Handing the oldest held descriptor
// to the next key instead would make every append of every cycle open.
// Sealing a key frees its descriptor for a new segment.
func TestHeldDescriptorsServeTheirKeysEveryCycle(t *testing.T) {
	opts := DefaultOptions()
	opts.Dir, opts.SegmentOpenFiles = t.TempDir(), 2*appendShards
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const keys = 1000
	before := openFDs(t)
	appendCycle := func(c int64) uint64 {
		t.Helper()
		opens := s.Stats().SegmentOpens
		for k := range keys {
			e := entryAt(fmt.Sprintf("dev%d/if%d", k/48, k%48), 1000+30*c)
			if _, _, err := s.Append(&e); err != nil {
				t.Fatal(err)
			}
		}
		return s.Stats().SegmentOpens - opens
	}
	if opened := appendCycle(0); opened != 0 {
		t.Fatalf("the first cycle opened %d segments by name; want 0 (each created its segment)", opened)
	}
	held := openFDs(t) - before
	if held != opts.SegmentOpenFiles {
		t.Fatalf("%d descriptors held after the first cycle; want %d (every shard's share: %d keys a shard)", held, opts.SegmentOpenFiles, keys/appendShards)
	}
	for c := int64(1); c <= 3; c++ {
		if opened := appendCycle(c); opened != uint64(keys-held) {
			t.Fatalf("cycle %d opened %d segments by name; want %d (the %d keys without a held descriptor)", c, opened, keys-held, keys-held)
		}
	}
	// Sealing every key closes the descriptors; the next cycle's new
	// segments take them again.
	for k := range keys {
		s.Seal(KeyHash(fmt.Sprintf("dev%d/if%d", k/48, k%48)))
	}
	if n := openFDs(t) - before; n != 0 {
		t.Fatalf("%d descriptors held after sealing every key; want 0", n)
	}
	if opened := appendCycle(4); opened != 0 {
		t.Fatalf("the cycle after sealing opened %d segments by name; want 0 (each created a new one)", opened)
	}
	if n := openFDs(t) - before; n != held {
		t.Fatalf("%d descriptors held after new segments; want %d again", n, held)
	}
}
