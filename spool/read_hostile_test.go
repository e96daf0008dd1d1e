package spool

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/testing/testuser"
)

// TestReadNeverFollowsOrBlocks puts things that are not entry files at an
// entry's path: Read must give a CorruptionError naming the path and the
// kind of file, never follow a symlink (even to a valid entry), and never
// block on a FIFO; Quarantine then moves the thing itself.
func TestReadNeverFollowsOrBlocks(t *testing.T) {
	outside := t.TempDir()
	e := sampleEntry()
	good, _ := e.AppendEncode(nil)
	validOutside := filepath.Join(outside, e.Ref().String())
	if err := os.WriteFile(validOutside, good, 0o640); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, reason string
		make         func(path string) error
	}{
		{"symlink to a valid entry", "symlink", func(p string) error { return os.Symlink(validOutside, p) }},
		{"symlink to /dev/zero", "symlink", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"dangling symlink", "symlink", func(p string) error { return os.Symlink(filepath.Join(outside, "none"), p) }},
		{"FIFO", "FIFO", func(p string) error { return unix.Mkfifo(p, 0o640) }},
		{"directory", "directory", func(p string) error { return os.Mkdir(p, 0o750) }},
		{"oversized", "longer than the largest entry", func(p string) error {
			return os.WriteFile(p, append(good, make([]byte, maxEntryLen)...), 0o640)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openTest(t, t.TempDir(), FsyncNone)
			ref := e.Ref()
			path := s.EntryPath(ref)
			if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
				t.Fatal(err)
			}
			if err := tc.make(path); err != nil {
				t.Fatal(err)
			}
			err := readBounded(t, s, ref)
			var ce *CorruptionError
			if !errors.As(err, &ce) || ce.Path != path || !strings.Contains(ce.Reason, tc.reason) {
				t.Fatalf("Read = %v; want a CorruptionError naming %s and %q", err, path, tc.reason)
			}
			if st := s.Stats(); st.Corrupt != 1 || st.ReadErrors != 0 {
				t.Errorf("corrupt %d, read errors %d; want 1, 0", st.Corrupt, st.ReadErrors)
			}
			dst, err := s.Quarantine(ref, err.Error())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(dst); err != nil {
				t.Fatalf("quarantined thing missing: %v", err)
			}
			if b, err := os.ReadFile(validOutside); err != nil || string(b) != string(good) {
				t.Fatalf("the file outside the spool changed: %v", err)
			}
		})
	}
}

// readBounded reads ref, failing instead of hanging if Read blocks.
func readBounded(t *testing.T, s *Spool, ref Ref) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := s.Read(ref); done <- err }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatal("Read blocked for a minute")
	}
	return nil
}

// TestUnreadableEntryIsCorrupt: an entry file the daemon may not read can
// never be applied; Read says so with a CorruptionError (so the writer
// quarantines it instead of retrying it forever ahead of the target's later
// entries). chmod 000 does not stop root, so as root the read is made with
// the file-system uid dropped to nobody on a locked thread (setfsuid(2)
// clears CAP_DAC_OVERRIDE for that thread only).
func TestUnreadableEntryIsCorrupt(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, FsyncNone)
	e := sampleEntry()
	ref, err := s.Write(&e)
	if err != nil {
		t.Fatal(err)
	}
	path := s.EntryPath(ref)
	if err := os.Chmod(path, 0); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		for d := filepath.Dir(path); len(d) > 1; d = filepath.Dir(d) {
			if strings.HasPrefix(d, filepath.Dir(dir)) {
				os.Chmod(d, 0o755) // let nobody reach the file; the test's own dirs
			}
		}
	}
	testuser.AsNobody(t, func() { _, err = s.Read(ref) })
	var ce *CorruptionError
	if !errors.As(err, &ce) || ce.Path != path || !strings.Contains(ce.Reason, "unreadable") || !strings.Contains(ce.Reason, "permission denied") {
		t.Fatalf("Read of a chmod 000 entry = %v; want a CorruptionError naming %s, unreadable: permission denied", err, path)
	}
}
