// Package pagecache drops files from the kernel's page cache, so that
// benchmarks read them from disk as a daemon whose files do not all fit
// in memory would. It starts no goroutines and keeps no state.
package pagecache

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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
