package spool

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCountFiles: the regular files of the leaf directories are counted;
// tmp/, quarantine/, a directory that is no level and a file at an
// intermediate level are not.
func TestCountFiles(t *testing.T) {
	dir := t.TempDir()
	touch := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, leaf := range []string{"a/bc", "f/00"} {
		for i := range 5 {
			touch(filepath.Join(dir, leaf, strings.Repeat("0", 14)+leaf[len(leaf)-2:]+"-"+string(rune('a'+i))))
		}
	}
	for _, d := range []string{TmpDir, "quarantine", "zz"} {
		touch(filepath.Join(dir, d, "x"))
	}
	touch(filepath.Join(dir, "a", "stray"))
	files, leaves, err := CountFiles(dir, MustParseLevels("1:2"))
	if err != nil {
		t.Fatal(err)
	}
	if files != 10 || leaves != 2 {
		t.Errorf("%d files in %d leaves, want 10 in 2", files, leaves)
	}
	if _, _, err := CountFiles(filepath.Join(dir, "none"), MustParseLevels("1:2")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing spool: %v, want fs.ErrNotExist", err)
	}
}
