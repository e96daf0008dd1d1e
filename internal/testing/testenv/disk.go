package testenv

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The full-disk tests' file systems: a small tmpfs, filled.

// MountTmpfs mounts a tmpfs of size bytes at dir until the test ends, or
// skips the test loudly where mounting is not permitted.
func MountTmpfs(t testing.TB, dir string, size string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0750"); err != nil {
		Missing(t, "cannot mount a small tmpfs at %s (%v): the full-disk and read-only tests need root or CAP_SYS_ADMIN", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
}

// FillDisk writes a file into dir until the file system is full and
// returns its path.
func FillDisk(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 64<<10)
	for {
		_, err := f.Write(block)
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		if err != nil {
			t.Fatalf("fill %s: %v", dir, err)
		}
	}
	// Small writes fill the last partial block.
	for {
		if _, err := f.Write(block[:1]); err != nil {
			return path
		}
	}
}

// SwapForSymlink moves the directory dir into a new temporary directory
// outside it and leaves in its place a symlink to where it went, as
// someone who can write beside dir would, and returns the new path.
func SwapForSymlink(tb testing.TB, dir string) string {
	tb.Helper()
	moved := filepath.Join(tb.TempDir(), filepath.Base(dir))
	if err := os.Rename(dir, moved); err != nil {
		tb.Fatal(err)
	}
	if err := os.Symlink(moved, dir); err != nil {
		tb.Fatal(err)
	}
	return moved
}
