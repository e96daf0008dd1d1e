package pagecache

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// resident counts the pages of path in the page cache (mincore).
func resident(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	m, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	pages := (len(m) + os.Getpagesize() - 1) / os.Getpagesize()
	vec := make([]byte, pages)
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// TestDropTree writes and reads a 256 KiB file in a sub-directory, syncs,
// and checks that DropTree leaves none of its pages cached.
func TestDropTree(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a", "f")
	os.Mkdir(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, make([]byte, 256<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	os.ReadFile(path)
	syscall.Sync()
	if resident(t, path) == 0 {
		testenv.Missing(t, "the file system does not keep the file in the page cache (tmpfs?)")
	}
	if err := DropTree(dir); err != nil {
		t.Fatal(err)
	}
	if n := resident(t, path); n != 0 {
		t.Errorf("%d pages still cached after DropTree", n)
	}
}
