package spool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sameLeafKey returns a key other than key whose entries live in key's
// leaf directory.
func sameLeafKey(t *testing.T, l Levels, key string) string {
	t.Helper()
	for i := range 1 << 20 {
		k := fmt.Sprintf("%s-neighbour%d", key, i)
		if l.LeafIndex(KeyHash(k)) == l.LeafIndex(KeyHash(key)) {
			return k
		}
	}
	t.Fatal("no key found in the same leaf")
	return ""
}

// TestASymlinkedLevelDirectoryIsRefused: a leaf directory swapped for a
// symlink while spoold runs (moved out of the spool and linked back, or
// removed and replaced by a link to a directory elsewhere that holds a
// file of a segment's name) takes no append, create, drop-in, read,
// removal or quarantine out of the spool: each is refused with an error
// that names the file and wraps ErrSymlinkOnPath, counted, and nothing
// outside changes. With descriptors held, the held segment's file is gone
// (removed), which its append finds as before.
func TestASymlinkedLevelDirectoryIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		held int
		// swap replaces the leaf directory leaf by a symlink to a
		// directory in outside, and returns the link's target.
		swap func(t *testing.T, leaf, outside string, seg Ref) string
	}{
		{"moved out and linked back", 0, func(t *testing.T, leaf, outside string, _ Ref) string {
			target := filepath.Join(outside, "leaf")
			if err := os.Rename(leaf, target); err != nil {
				t.Fatal(err)
			}
			return target
		}},
		{"removed and linked elsewhere, held descriptors", 1024, func(t *testing.T, leaf, outside string, seg Ref) string {
			// The file outside has the segment's name and a valid
			// entry of its key: a read through the link would take it.
			data, err := os.ReadFile(filepath.Join(leaf, seg.String()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.RemoveAll(leaf); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(outside, seg.String()), data, 0o640); err != nil {
				t.Fatal(err)
			}
			return outside
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			o := openOpts(dir)
			o.SegmentOpenFiles = tc.held
			s, err := Open(o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			key := "router1/ifName=ge-0/0/0"
			other := sameLeafKey(t, s.Levels(), key)
			e := entryAt(key, 1000)
			seg, _, err := s.Append(&e)
			if err != nil {
				t.Fatal(err)
			}
			leaf := filepath.Join(dir, s.Levels().Dir(seg.Hash))
			target := tc.swap(t, leaf, outside, seg)
			if err := os.Symlink(target, leaf); err != nil {
				t.Fatal(err)
			}
			before := tree(t, outside)
			path := s.EntryPath(seg)
			refused := func(op string, err error, name string) {
				t.Helper()
				if !errors.Is(err, ErrSymlinkOnPath) || !strings.Contains(err.Error(), name) {
					t.Errorf("%s = %v; want an error naming %s and wrapping ErrSymlinkOnPath", op, err, name)
				}
			}

			e = entryAt(key, 1030)
			_, _, err = s.Append(&e) // held: finds its file removed; the next append creates
			if tc.held > 0 {
				if err == nil {
					t.Errorf("append to the removed held segment succeeded")
				}
				_, _, err = s.Append(&e)
			}
			refused("Append to the open segment", err, filepath.Dir(path))
			e = entryAt(other, 1000)
			_, _, err = s.Append(&e)
			refused("Append creating a segment", err, filepath.Dir(path))
			e = entryAt(other, 2000)
			_, err = s.Write(&e)
			refused("Write", err, filepath.Dir(path))
			_, err = s.ReadSegment(seg)
			refused("ReadSegment", err, path)
			var buf SegmentBuffer
			_, err = s.ReadSegmentInto(seg, &buf)
			refused("ReadSegmentInto", err, path)
			_, err = s.Read(seg)
			refused("Read", err, path)
			_, err = s.OpenDir(seg.Hash)
			refused("OpenDir", err, filepath.Dir(path))
			_, err = s.OpenLeafDir(s.Levels().LeafIndex(seg.Hash))
			refused("OpenLeafDir", err, filepath.Dir(path))
			refused("Remove", s.Remove(seg), path)
			_, err = s.Quarantine(seg, "test")
			refused("Quarantine", err, path)

			if after := tree(t, outside); !slices.Equal(before, after) {
				t.Errorf("the directory outside the spool changed:\nbefore %v\nafter  %v", before, after)
			}
			st := s.Stats()
			if st.SymlinksRefused < 10 || st.WriteErrors < 3 || st.ReadErrors < 3 || st.Corrupt != 0 || st.Quarantined != 0 || st.Removed != 0 {
				t.Errorf("stats %+v; want at least 10 symlinks refused, 3 write errors, 3 read errors, and nothing corrupt, quarantined or removed", st)
			}
		})
	}
}

// TestASymlinkInPlaceOfASegmentIsCorrupt: a symlink where a segment's file
// should be (not on the way to it) is a file that can never be read as a
// segment: a CorruptionError, quarantined as the link itself, not a
// refusal of its directory.
func TestASymlinkInPlaceOfASegmentIsCorrupt(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	s := openTest(t, dir, FsyncNone)
	e := entryAt("k", 1000)
	ref := e.Ref()
	putFiles(t, outside, "x")
	if err := os.MkdirAll(filepath.Dir(s.EntryPath(ref)), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "x"), s.EntryPath(ref)); err != nil {
		t.Fatal(err)
	}
	_, err := s.ReadSegment(ref)
	var ce *CorruptionError
	if !errors.As(err, &ce) || errors.Is(err, ErrSymlinkOnPath) {
		t.Fatalf("ReadSegment = %v; want a CorruptionError", err)
	}
	dst, err := s.Quarantine(ref, ce.Reason)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(dst); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("quarantined %s: %v, %v; want the link itself", dst, fi, err)
	}
	if s.Stats().SymlinksRefused != 0 {
		t.Errorf("symlinks refused %d, want 0", s.Stats().SymlinksRefused)
	}
}
