package fileutil

import (
	"os"
	"path/filepath"
	"testing"
)

// TestContains: by name once cleaned, through symlinks of the part that
// exists, and not for a sibling whose name only starts the same.
func TestContains(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "real", "sub"), 0o750)
	os.Symlink(filepath.Join(dir, "real"), filepath.Join(dir, "link"))
	for _, tc := range []struct {
		dir, path string
		want      bool
	}{
		{"real", "real", true},
		{"real", "real/sub", true},
		{"real", "real/sub/new/deeper", true},
		{"real/sub", "real", false},
		{"real", "realer", false},
		{"real", "real/../realer", false},
		{"link", "real/sub", true},
		{"real/sub", "link/sub/new", true},
		{"link/new", "real/new", true},
		{"new", "new/x/../y", true},
		{"new/a", "new/b", false},
		{"real/..x", "real/..x/y", true},
	} {
		got, err := Contains(filepath.Join(dir, tc.dir), filepath.Join(dir, tc.path))
		if err != nil || got != tc.want {
			t.Errorf("Contains(%s, %s) = %v, %v; want %v", tc.dir, tc.path, got, err, tc.want)
		}
	}
}
