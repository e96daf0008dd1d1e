package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spoold/spoold/internal/testing/spoolgen"
	"github.com/spoold/spoold/spool"
)

// TestLoadDryRunMovesNothing: `spoold load` reports what the daemon's walk
// would quarantine and changes nothing on disk (before, it moved an
// operator's files into quarantine/).
func TestLoadDryRunMovesNothing(t *testing.T) {
	dir := t.TempDir()
	sp := spoolgen.OpenTest(t, dir)
	o := spoolgen.DefaultOptions()
	o.Entries, o.Keys = 500, 40
	if _, err := spoolgen.Generate(sp, o); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, spool.TmpDir, "999.dead.1")
	bad := filepath.Join(dir, "0", "00", "not-an-entry")
	notes := filepath.Join(dir, "notes.txt")
	for _, p := range []string{stale, bad, notes} {
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	sp.Close()
	before := treeOf(t, dir)

	var stdout, stderr bytes.Buffer
	code := run([]string{"load", "--spool-dir", dir, "--loader-files", "50", "--loader-sleep", "0"}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
	}
	var sum loadSummary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatalf("summary %q: %v", stdout.String(), err)
	}
	if sum.Entries != 500 || sum.WouldQuarantine != 2 || sum.Files != 502 {
		t.Fatalf("summary = %+v, want 500 entries, 2 to quarantine, 502 files", sum)
	}
	if sum.Iterations < 10 {
		t.Fatalf("iterations = %d, want >= 10 for 502 files at loader_files=50", sum.Iterations)
	}
	for _, p := range []string{bad, notes} {
		if !strings.Contains(stderr.String(), "would quarantine") || !strings.Contains(stderr.String(), p) {
			t.Errorf("stderr does not report %s as to be quarantined:\n%s", p, stderr.String())
		}
	}
	if after := treeOf(t, dir); !slices.Equal(before, after) {
		t.Fatalf("the dry run changed the spool:\nbefore %v\nafter  %v", before, after)
	}
}

// treeOf lists every path under dir with its mode, size and modification
// time.
func treeOf(t *testing.T, dir string) []string {
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
		out = append(out, fmt.Sprintf("%s %v %d %v", p, fi.Mode(), fi.Size(), fi.ModTime()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLoadRefusesForeignDirectory: the dry run of a directory that is not
// a spool is refused like the daemon's start, and creates nothing there.
func TestLoadRefusesForeignDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "session.dat"), []byte("x"), 0o640); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"load", "--spool-dir", dir}, &stdout, &stderr); code != exitError {
		t.Fatalf("exit %d, want %d", code, exitError)
	}
	if !strings.Contains(stderr.String(), "not a spoold spool") {
		t.Fatalf("stderr = %q", stderr.String())
	}
	if names, _ := os.ReadDir(dir); len(names) != 1 {
		t.Fatalf("the dry run left %v", names)
	}
}

func TestLoadRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"--levels 3:3", "levels"},
		{"--loader-files 0", "loader_files"},
		{"--loader-cpu 150%", "loader-cpu"},
		{"--keys-zone 12q", "keys-zone"},
		{"--fsync sometimes", "fsync"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"load", "--spool-dir", t.TempDir()}, strings.Fields(tc.args)...)
			if code := run(args, &stdout, &stderr); code != exitUsage {
				t.Fatalf("exit %d, want %d", code, exitUsage)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("stderr %q does not name %q", stderr.String(), tc.want)
			}
		})
	}
}

func TestSecondLoadOnALockedSpoolFails(t *testing.T) {
	dir := t.TempDir()
	spoolgen.OpenTest(t, dir)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"load", "--spool-dir", dir}, &stdout, &stderr); code != exitError {
		t.Fatalf("exit %d, want %d", code, exitError)
	}
	if !strings.Contains(stderr.String(), "locked by another process") {
		t.Fatalf("stderr = %q", stderr.String())
	}
}
