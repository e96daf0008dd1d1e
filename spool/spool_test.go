package spool

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

func openTest(t *testing.T, dir string, fsync FsyncPolicy) *Spool {
	t.Helper()
	opts := DefaultOptions()
	opts.Dir, opts.Fsync = dir, fsync
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestWriteReadRemove(t *testing.T) {
	for _, policy := range []FsyncPolicy{FsyncNone, FsyncBatch, FsyncAlways} {
		t.Run(policy.String(), func(t *testing.T) {
			s := openTest(t, t.TempDir(), policy)
			e := sampleEntry()
			ref, err := s.Write(&e)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
			path := s.EntryPath(ref)
			want := filepath.Join(s.Dir(), s.Levels().Dir(ref.Hash), ref.String())
			if path != want {
				t.Fatalf("EntryPath = %s, want %s", path, want)
			}
			got, err := s.Read(ref)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, e) {
				t.Fatalf("Read = %+v, want %+v", got, e)
			}
			if names, _ := os.ReadDir(filepath.Join(s.Dir(), TmpDir)); len(names) != 0 {
				t.Fatalf("tmp/ holds %d files after a write", len(names))
			}
			if err := s.Remove(ref); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Read(ref); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Read after Remove: %v, want ErrNotExist", err)
			}
			st := s.Stats()
			if st.Written != 1 || st.Read != 1 || st.Removed != 1 || st.ReadErrors != 1 {
				t.Fatalf("stats = %+v", st)
			}
		})
	}
}

func TestSecondOpenFailsWithHolderPid(t *testing.T) {
	dir := t.TempDir()
	openTest(t, dir, FsyncNone)
	opts := DefaultOptions()
	opts.Dir = dir
	_, err := Open(opts)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "pid") {
		t.Fatalf("error %q does not name the directory and holder", err)
	}
}

func TestCloseReleasesLockAndIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	opts := DefaultOptions()
	opts.Dir = dir
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	s2, err := Open(opts)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s2.Close()
}

func TestReadCorruptEntryNamesPathAndQuarantines(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNone)
	e := sampleEntry()
	ref, err := s.Write(&e)
	if err != nil {
		t.Fatal(err)
	}
	path := s.EntryPath(ref)
	data, _ := os.ReadFile(path)
	if err := os.WriteFile(path, data[:len(data)/2], 0o640); err != nil {
		t.Fatal(err)
	}
	_, err = s.Read(ref)
	var ce *CorruptionError
	if !errors.As(err, &ce) || ce.Path != path {
		t.Fatalf("Read of a truncated entry: %v, want CorruptionError naming %s", err, path)
	}
	dst, err := s.Quarantine(ref, ce.Error())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("quarantined file still in place")
	}
	kept, err := os.ReadFile(dst)
	if err != nil || string(kept) != string(data[:len(data)/2]) {
		t.Fatalf("quarantined bytes differ or missing: %v", err)
	}
	reason, err := os.ReadFile(dst + ".reason")
	if err != nil || !strings.Contains(string(reason), "truncated") && !strings.Contains(string(reason), "checksum") {
		t.Fatalf("reason file = %q, %v", reason, err)
	}
	if s.Stats().Quarantined != 1 || s.Stats().Corrupt != 1 {
		t.Fatalf("stats = %+v", s.Stats())
	}
}

func TestReadDetectsContentThatDoesNotMatchName(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNone)
	e := sampleEntry()
	ref, _ := s.Write(&e)
	other := Ref{Hash: ref.Hash, Time: ref.Time + 300}
	if err := os.Rename(s.EntryPath(ref), s.EntryPath(other)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(other); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Read of a renamed entry: %v, want ErrCorrupt", err)
	}
}

func TestRemoveStaleTempKeepsOwnWritesInFlight(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, FsyncNone)
	stale := filepath.Join(dir, TmpDir, "1234.abc.7")
	own := filepath.Join(dir, TmpDir, s.instance+"99")
	for _, p := range []string{stale, own} {
		if err := os.WriteFile(p, []byte("x"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.RemoveStaleTemp()
	if err != nil || n != 1 {
		t.Fatalf("RemoveStaleTemp = %d, %v; want 1", n, err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Error("stale temp file survived")
	}
	if _, err := os.Stat(own); err != nil {
		t.Errorf("own temp file removed: %v", err)
	}
}

// TestReadDoesNotUpdateAtime: with atime older than mtime, a relatime mount
// would update it on a plain read; O_NOATIME must leave it alone.
func TestReadDoesNotUpdateAtime(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNone)
	e := sampleEntry()
	ref, _ := s.Write(&e)
	path := s.EntryPath(ref)
	old := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	if err := os.Chtimes(path, old, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(ref); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	st := fi.Sys().(*syscall.Stat_t)
	if atime := time.Unix(st.Atim.Unix()); !atime.Equal(old) {
		t.Fatalf("atime moved from %v to %v", old, atime)
	}
}

func TestParseFsyncPolicy(t *testing.T) {
	for _, s := range []string{"none", "batch", "always"} {
		p, err := ParseFsyncPolicy(s)
		if err != nil || p.String() != s {
			t.Errorf("ParseFsyncPolicy(%q) = %v, %v", s, p, err)
		}
	}
	for _, s := range []string{"", "sometimes", "ALWAYS"} {
		if _, err := ParseFsyncPolicy(s); err == nil {
			t.Errorf("ParseFsyncPolicy(%q) accepted", s)
		}
	}
}

func TestOpenCreatesEveryLevelDirectory(t *testing.T) {
	dir := t.TempDir()
	opts := DefaultOptions()
	opts.Dir, opts.Levels, opts.PrecreateDirs = dir, "1:1", true
	s, err := Open(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	leaves, _ := filepath.Glob(filepath.Join(dir, "?", "?"))
	if len(leaves) != 256 {
		t.Fatalf("%d leaf directories, want 256", len(leaves))
	}
	if _, err := os.Stat(filepath.Join(dir, "f", "a")); err != nil {
		t.Fatal(err)
	}
}
