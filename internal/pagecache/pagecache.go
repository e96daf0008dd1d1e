// Package pagecache drops files from the kernel's page cache, so that
// benchmarks read them from disk as a daemon whose files do not all fit
// in memory would, and tests find them out of the cache. It starts no
// goroutines and keeps no state.
package pagecache

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DropTree drops the cached pages of every regular file under dir
// (posix_fadvise DONTNEED). Dirty pages are not dropped: sync first.
func DropTree(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		return Drop(path)
	})
}

// Drop drops the cached pages of one file (posix_fadvise DONTNEED).
func Drop(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("posix_fadvise DONTNEED %s: %w", path, err)
	}
	return nil
}

// DropAll drops every cached page of the file at path, writing back its
// dirty pages first, and checks that none is left: a page the kernel holds
// at that moment (locked by its own page scanner, or waiting in another
// CPU's batch of new pages) is not dropped, so it tries again, up to tries
// times. For tests that need a file read from disk.
func DropAll(path string, tries int) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fd := int(f.Fd())
	if err := unix.Fdatasync(fd); err != nil {
		return fmt.Errorf("fdatasync %s: %w", path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	left := 0
	for range max(tries, 1) {
		if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil {
			return fmt.Errorf("posix_fadvise DONTNEED %s: %w", path, err)
		}
		if left, err = cached(fd, st.Size); err != nil || left == 0 {
			return err
		}
	}
	return fmt.Errorf("drop %s from the page cache: %d pages still cached after %d tries", path, left, tries)
}

// cached returns how many of the first size bytes' pages of the file open
// as fd are in the page cache: mincore of a mapping of them, which reads
// none.
func cached(fd int, size int64) (int, error) {
	if size == 0 {
		return 0, nil
	}
	m, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return 0, fmt.Errorf("map for mincore: %w", err)
	}
	defer unix.Munmap(m)
	page := int64(os.Getpagesize())
	vec := make([]byte, (size+page-1)/page)
	// x/sys/unix has no wrapper for mincore(2).
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		return 0, fmt.Errorf("mincore: %w", e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n, nil
}
