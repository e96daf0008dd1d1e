package fileutil

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestRenameNoReplaceNeverReplaces(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("a"), 0o640)
	os.WriteFile(b, []byte("b"), 0o640)
	if err := RenameNoReplace(unix.AT_FDCWD, a, unix.AT_FDCWD, b); !errors.Is(err, unix.EEXIST) {
		t.Fatalf("rename over an existing file: %v, want EEXIST", err)
	}
	if got, _ := os.ReadFile(b); string(got) != "b" {
		t.Fatalf("b replaced: %q", got)
	}
	c := filepath.Join(dir, "c")
	if err := RenameNoReplace(unix.AT_FDCWD, a, unix.AT_FDCWD, c); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(c); string(got) != "a" {
		t.Fatalf("c = %q", got)
	}
}

// TestNoAtimeReadsWithoutTouchingAtime: a file read through NoAtime keeps
// its access time (as the owner; root may always use O_NOATIME).
func TestNoAtimeReadsWithoutTouchingAtime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	os.WriteFile(path, []byte("data"), 0o640)
	old := unix.NsecToTimespec(1e9)
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{old, old}, 0); err != nil {
		t.Fatal(err)
	}
	var n NoAtime
	fd, err := n.Openat(unix.AT_FDCWD, path, unix.O_RDONLY|unix.O_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	unix.Read(fd, buf)
	unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	if st.Atim.Sec != 1 || n.Denied() != 0 {
		t.Fatalf("atime %d after a read (denied %d); want it untouched", st.Atim.Sec, n.Denied())
	}
}

func TestTypeNames(t *testing.T) {
	for _, tc := range []struct {
		mode uint32
		want string
	}{{unix.S_IFREG, "regular file"}, {unix.S_IFDIR, "directory"}, {unix.S_IFIFO, "FIFO"}, {unix.S_IFLNK, "symlink"}, {0o170000, "file type 0170000"}} {
		if got := TypeName(tc.mode); got != tc.want {
			t.Errorf("TypeName(%#o) = %q, want %q", tc.mode, got, tc.want)
		}
	}
	for _, tc := range []struct {
		typ  uint8
		want string
	}{{unix.DT_REG, "regular file"}, {unix.DT_DIR, "directory"}, {unix.DT_FIFO, "FIFO"}, {unix.DT_SOCK, "socket"}, {unix.DT_LNK, "symlink"}, {unix.DT_UNKNOWN, "d_type 0"}} {
		if got := DirentTypeName(tc.typ); got != tc.want {
			t.Errorf("DirentTypeName(%d) = %q, want %q", tc.typ, got, tc.want)
		}
	}
}
