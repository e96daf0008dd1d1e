package spool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// operatorFiles are what an operator keeps in a directory of their own.
var operatorFiles = []string{"session.dat", "build.o", ".X0-lock"}

// putFiles writes each name in dir with its name as content.
func putFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o640); err != nil {
			t.Fatal(err)
		}
	}
}

// checkFiles fails unless each name in dir still holds its name.
func checkFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if b, err := os.ReadFile(filepath.Join(dir, n)); err != nil || string(b) != n {
			t.Errorf("%s: %q, %v; want it untouched", filepath.Join(dir, n), b, err)
		}
	}
}

// tree lists every path under dir with its kind and size, to tell that
// nothing changed.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %v %v %d", p, fi.Mode(), fi.ModTime(), fi.Size()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func openOpts(dir string) Options {
	o := DefaultOptions()
	o.Dir = dir
	return o
}

// TestOpenRefusesForeignDirectory: `--spool-dir X` where X holds an
// operator's files, in X itself or in X/tmp/, is refused with an error that
// names X and what was found, and nothing in X changes (before the marker,
// Open created lock and quarantine/ there and the loader deleted X/tmp/).
func TestOpenRefusesForeignDirectory(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		make       func(t *testing.T, dir string)
	}{
		{"files", `such as ".X0-lock"`, func(t *testing.T, dir string) { putFiles(t, dir, operatorFiles...) }},
		{"tmp with files", `1 entry, "tmp"; no lock file`, func(t *testing.T, dir string) { putFiles(t, filepath.Join(dir, TmpDir), operatorFiles...) }},
		{"lock and a file", `such as "notes.txt"`, func(t *testing.T, dir string) { putFiles(t, dir, LockFile, "notes.txt") }},
		{"level directories of other levels", `do not fit --levels 1:2`, func(t *testing.T, dir string) {
			putFiles(t, dir, LockFile)
			putFiles(t, filepath.Join(dir, "ab", "cd"), "x")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.make(t, dir)
			before := tree(t, dir)
			s, err := Open(openOpts(dir))
			if err == nil {
				_, _ = s.RemoveStaleTemp()
				s.Close()
				t.Fatalf("Open of a foreign directory succeeded")
			}
			for _, want := range []string{dir, "not a spoold spool", tc.want, "--spool-dir"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if after := tree(t, dir); !slices.Equal(before, after) {
				t.Errorf("the directory changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// TestOpenRefusesTheRootDirectory: `--spool-dir /` is a non-empty directory
// without a marker. Before the marker, Open created /quarantine and /lock
// and the loader emptied /tmp. The read-only Open cannot create anything;
// the plain one runs only as a user who cannot write /, so that running
// this test against a spoold without the fix does no harm.
func TestOpenRefusesTheRootDirectory(t *testing.T) {
	if _, err := os.Lstat("/" + MarkerFile); err == nil {
		t.Skip("/ holds a spoold marker")
	}
	o := openOpts("/")
	o.ReadOnly = true
	if _, err := Open(o); err == nil || !strings.Contains(err.Error(), "open spool /: not a spoold spool") {
		t.Fatalf("read-only Open(/) = %v, want a refusal", err)
	}
	if os.Geteuid() == 0 {
		t.Skip("root: not trying a writable Open of /")
	}
	if _, err := Open(openOpts("/")); err == nil || !strings.Contains(err.Error(), "open spool /: not a spoold spool") {
		t.Fatalf("Open(/) = %v, want a refusal", err)
	}
}

// TestOpenReadOnlyCreatesNothing: a dry run's Open of an old spool without
// marker writes neither the marker nor the pid, and refuses to change
// anything.
func TestOpenReadOnlyCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	openTest(t, dir, FsyncNone).Close()
	if err := os.Remove(filepath.Join(dir, MarkerFile)); err != nil {
		t.Fatal(err)
	}
	putFiles(t, filepath.Join(dir, TmpDir), "1.a.1")
	before := tree(t, dir)
	o := openOpts(dir)
	o.ReadOnly = true
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RemoveStaleTemp(); err == nil {
		t.Error("RemoveStaleTemp of a read-only spool succeeded")
	}
	if _, err := s.QuarantineName(TmpDir+"/1.a.1", "test"); err == nil {
		t.Error("Quarantine in a read-only spool succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if after := tree(t, dir); !slices.Equal(before, after) {
		t.Errorf("a read-only Open changed the spool:\nbefore %v\nafter  %v", before, after)
	}
	for _, d := range []string{t.TempDir(), filepath.Join(t.TempDir(), "none")} {
		o.Dir = d
		if _, err := Open(o); err == nil {
			t.Errorf("read-only Open of %s (empty or missing) succeeded", d)
		}
		if _, err := os.Stat(filepath.Join(d, LockFile)); err == nil {
			t.Errorf("read-only Open created %s", filepath.Join(d, LockFile))
		}
	}
}

// TestOpenWritesMarker: a new spool gets a marker with its format and
// levels; an empty directory (mkdir'ed by the operator) is a new spool.
func TestOpenWritesMarker(t *testing.T) {
	dir := t.TempDir()
	o := openOpts(dir)
	o.Levels = "1:1:2"
	s, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b, err := os.ReadFile(filepath.Join(dir, MarkerFile))
	if err != nil || string(b) != "spoold spool 1\nlevels 1:1:2\n" {
		t.Fatalf("marker = %q, %v", b, err)
	}
	if names, _ := os.ReadDir(filepath.Join(dir, TmpDir)); len(names) != 0 {
		t.Fatalf("tmp/ holds %v after Open", names)
	}
}

// TestOpenAdoptsSpoolWithoutMarker: a spool made before the marker existed
// (lock, tmp/, quarantine/, level directories) opens, keeps its entries
// and gets the marker.
func TestOpenAdoptsSpoolWithoutMarker(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, FsyncNone)
	e := sampleEntry()
	ref, err := s.Write(&e)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.Remove(filepath.Join(dir, MarkerFile)); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir, FsyncNone)
	if _, err := s.Read(ref); err != nil {
		t.Fatalf("entry of the adopted spool: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, MarkerFile)); err != nil || string(b) != "spoold spool 1\nlevels 1:2\n" {
		t.Fatalf("marker of the adopted spool = %q, %v", b, err)
	}
}

// TestOpenRefusesOtherLevels: a spool walked with other levels would have
// every entry quarantined as misplaced; the marker's levels win.
func TestOpenRefusesOtherLevels(t *testing.T) {
	dir := t.TempDir()
	openTest(t, dir, FsyncNone).Close()
	o := openOpts(dir)
	o.Levels = "2"
	_, err := Open(o)
	if err == nil || !strings.Contains(err.Error(), `levels "1:2"`) || !strings.Contains(err.Error(), `--levels 2`) {
		t.Fatalf("Open with other levels = %v, want a refusal naming both", err)
	}
}

// TestOpenRefusesBadMarker: a marker spoold cannot read is refused, not
// rewritten.
func TestOpenRefusesBadMarker(t *testing.T) {
	for _, tc := range []struct{ name, content, want string }{
		{"newer format", "spoold spool 2\nlevels 1:2\n", "format 2"},
		{"garbage", "hello\n", "not a spoold marker"},
		{"bad levels", "spoold spool 1\nlevels 9\n", "parse levels"},
		{"extra line", "spoold spool 1\nlevels 1:2\nmore\n", "not a spoold marker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			openTest(t, dir, FsyncNone).Close()
			marker := filepath.Join(dir, MarkerFile)
			if err := os.WriteFile(marker, []byte(tc.content), 0o640); err != nil {
				t.Fatal(err)
			}
			_, err := Open(openOpts(dir))
			if err == nil || !strings.Contains(err.Error(), marker) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open = %v, want an error naming %s and %q", err, marker, tc.want)
			}
			if b, _ := os.ReadFile(marker); string(b) != tc.content {
				t.Fatalf("marker rewritten to %q", b)
			}
		})
	}
}

// TestOpenRefusesSymlinkAtFixedPath replaces each fixed member of a spool
// with a symlink to an operator's file or directory: Open refuses, naming
// the path, and nothing in the target is touched (before, tmp/'s target
// was emptied, lock's target truncated and overwritten with the pid,
// quarantined files written into quarantine/'s target, level directories
// created inside a level directory's target).
func TestOpenRefusesSymlinkAtFixedPath(t *testing.T) {
	for _, tc := range []struct {
		member string // relative path replaced by a symlink
		dir    bool   // the target is a directory
		want   string
	}{
		{TmpDir, true, "symlink"},
		{QuarantineDir, true, "symlink"},
		{LockFile, false, "symlink"},
		{MarkerFile, false, "symlink"},
		{"c", true, "symlink"},
		{"c/2", true, "symlink"},
	} {
		t.Run(strings.ReplaceAll(tc.member, "/", "_"), func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			o := openOpts(dir)
			o.Levels, o.PrecreateDirs = "1:1", true
			s, err := Open(o)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			path := filepath.Join(dir, tc.member)
			if err := os.RemoveAll(path); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(outside, "precious")
			if tc.dir {
				putFiles(t, target, "1234.abc.7", "session.dat")
			} else {
				putFiles(t, outside, "precious")
			}
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			before := tree(t, outside)
			s, err = Open(o)
			if err == nil {
				_, _ = s.RemoveStaleTemp()
				bad := filepath.Join(dir, "0", "0", "bad")
				putFiles(t, filepath.Dir(bad), "bad")
				_, _ = s.QuarantineName("0/0/bad", "test")
				s.Close()
				t.Errorf("Open with %s a symlink succeeded", tc.member)
			} else if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open = %v, want an error naming %s and %q", err, path, tc.want)
			}
			if after := tree(t, outside); !slices.Equal(before, after) {
				t.Errorf("the symlink's target changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// TestOpenRefusesHardLinkedLock: writing the pid into a lock file with a
// second name would overwrite the other name's content.
func TestOpenRefusesHardLinkedLock(t *testing.T) {
	dir := t.TempDir()
	openTest(t, dir, FsyncNone).Close()
	other := filepath.Join(t.TempDir(), "precious")
	putFiles(t, filepath.Dir(other), "precious")
	lock := filepath.Join(dir, LockFile)
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(other, lock); err != nil {
		testenv.Missing(t, "no hard links in the temp dir: %v", err)
	}
	_, err := Open(openOpts(dir))
	if err == nil || !strings.Contains(err.Error(), lock) {
		t.Errorf("Open with a hard-linked lock = %v, want an error naming %s", err, lock)
	}
	checkFiles(t, filepath.Dir(other), "precious")
}

// TestRemoveStaleTempRemovesOnlyItsOwnNames: operator files and anything
// else that is not a regular file named <pid>.<hex nanos>.<seq> survive
// RemoveStaleTemp (before, everything in tmp/ was deleted); a stale temp
// file of spoold's own pattern is still removed.
func TestRemoveStaleTempRemovesOnlyItsOwnNames(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, FsyncNone)
	tmp := filepath.Join(dir, TmpDir)
	foreign := append([]string{"1234.abc", "01234.abc.7", "1234.0abc.7", "1234.ABC.7", "1234.abc.07", "1234.abc.0", "1234.abc.7.x", "-1.abc.7", "1234..7"}, operatorFiles...)
	putFiles(t, tmp, foreign...)
	putFiles(t, tmp, "1234.abc.7", "1.dead.1")
	if err := os.Mkdir(filepath.Join(tmp, "55.abc.1"), 0o750); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	putFiles(t, outside, "precious")
	if err := os.Symlink(filepath.Join(outside, "precious"), filepath.Join(tmp, "56.abc.1")); err != nil {
		t.Fatal(err)
	}
	n, err := s.RemoveStaleTemp()
	if err != nil || n != 2 {
		t.Fatalf("RemoveStaleTemp = %d, %v; want 2 removed", n, err)
	}
	checkFiles(t, tmp, foreign...)
	checkFiles(t, outside, "precious")
	for _, name := range []string{"55.abc.1", "56.abc.1"} {
		if _, err := os.Lstat(filepath.Join(tmp, name)); err != nil {
			t.Errorf("%s removed: %v", name, err)
		}
	}
	for _, name := range []string{"1234.abc.7", "1.dead.1"} {
		if _, err := os.Lstat(filepath.Join(tmp, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("stale temp file %s survived: %v", name, err)
		}
	}
	if st := s.Stats(); st.TempRemoved != 2 || st.TempForeign != uint64(len(foreign)+2) {
		t.Errorf("temp removed %d, foreign %d; want 2, %d", st.TempRemoved, st.TempForeign, len(foreign)+2)
	}
}

// TestTempNameIsRecognised: every name tempName makes parses back to this
// process's instance, so RemoveStaleTemp never mistakes a write in flight.
func TestTempNameIsRecognised(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNone)
	for range 3 {
		name := s.tempName()
		if inst, ok := tempInstance(name); !ok || inst != s.instance {
			t.Fatalf("tempInstance(%q) = %q, %v; want %q", name, inst, ok, s.instance)
		}
	}
}
