package spool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQuarantineWritesInsideTheSpool: a quarantine/ swapped for a symlink
// after Open still gets nothing written through it; the file goes to the
// real quarantine directory Open opened.
func TestQuarantineWritesInsideTheSpool(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	s := openTest(t, dir, FsyncNone)
	q := filepath.Join(dir, QuarantineDir)
	if err := os.Rename(q, q+".real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, q); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "0", "00", "bad")
	putFiles(t, filepath.Dir(bad), "bad")
	dst, err := s.QuarantineName("0/00/bad", "test")
	if err != nil {
		t.Fatal(err)
	}
	if names, _ := os.ReadDir(outside); len(names) != 0 {
		t.Fatalf("quarantine wrote %v through the symlink", names)
	}
	if _, err := os.Stat(filepath.Join(q+".real", filepath.Base(dst))); err != nil {
		t.Fatalf("quarantined file not in the real quarantine: %v", err)
	}
	if _, err := os.Stat(filepath.Join(q+".real", filepath.Base(dst)+reasonSuffix)); err != nil {
		t.Fatalf("reason not in the real quarantine: %v", err)
	}
	for _, p := range []string{LockFile, MarkerFile, TmpDir, "../x", "/etc/passwd", filepath.Join(dir, "0", "00", "x"), "0/../0/00/x"} {
		if _, err := s.QuarantineName(p, "test"); err == nil {
			t.Errorf("Quarantine(%s) succeeded", p)
		}
	}
}

func TestQuarantineRangeKeepsTheBadBytes(t *testing.T) {
	s := openTest(t, t.TempDir(), FsyncNone)
	e1 := entryAt("k", 10)
	ref, _, err := s.Append(&e1)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(s.EntryPath(ref), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("SPLD\x02torn"))
	f.Close()
	g, err := s.ReadSegment(ref)
	if err != nil || len(g.Entries) != 1 || len(g.Bad) != 1 {
		t.Fatalf("ReadSegment = %+v, %v", g, err)
	}
	dst, err := s.QuarantineRange(&g, g.Bad[0])
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(dst)
	reason, _ := os.ReadFile(dst + reasonSuffix)
	if string(got) != "SPLD\x02torn" {
		t.Fatalf("quarantined bytes %q", got)
	}
	for _, want := range []string{"offset: " + fmt.Sprint(g.Bad[0].Offset), "length: 9", "torn", g.Path} {
		if !strings.Contains(string(reason), want) {
			t.Errorf("reason file %q lacks %q", reason, want)
		}
	}
	if filepath.Dir(dst) != filepath.Join(s.Dir(), QuarantineDir) {
		t.Fatalf("quarantined to %s", dst)
	}
}
