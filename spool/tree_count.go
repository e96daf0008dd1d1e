// The count of a spool by names: the tree walk of tree_walk.go with a
// visitor that counts leaf directories and the regular files in them.

package spool

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/fileutil"
)

// CountFiles counts the leaf directories of the spool at dir with levels
// l and the regular files in them (segments, one or more entries each:
// what the loader's loader_files counts), by names only: the loader's own
// walk of the tree, level directories read with getdents, never an open or
// stat of a file. tmp/ and quarantine/ are not level directories. The
// spool need not be locked or carry its marker; nothing is changed. A dir
// that does not exist gives an error wrapping fs.ErrNotExist; a directory
// below it that cannot be read is an error after the walk.
func CountFiles(dir string, l Levels) (files uint64, leafDirs int, err error) {
	root, err := openCountDir(unix.AT_FDCWD, dir)
	if err != nil {
		return 0, 0, fmt.Errorf("open spool %s: %w", dir, err)
	}
	defer unix.Close(root)
	c := &fileCount{dir: dir, dr: NewDirReader()}
	walker := &TreeWalker{Levels: l, Dirs: c.dr, OpenDir: openCountDir}
	if err := walker.Walk(root, c); err != nil {
		return c.files, c.leafDirs, err
	}
	return c.files, c.leafDirs, c.err
}

// fileCount is CountFiles's TreeVisitor.
type fileCount struct {
	dir      string
	dr       *DirReader
	files    uint64
	leafDirs int
	err      error // the first directory that could not be read
}

func (c *fileCount) Enter(int, string) error        { return nil }
func (c *fileCount) Entry(int, string, uint8) error { return nil }
func (c *fileCount) Problem(what string, _ int, err error) {
	c.fail(fmt.Errorf("%s in %s: %w", what, c.dir, err))
}

func (c *fileCount) Leaf(parent int, name string, _ int) error {
	fd, err := openCountDir(parent, name)
	if err != nil {
		c.fail(fmt.Errorf("open directory %s in %s: %w", name, c.dir, err))
		return nil
	}
	defer unix.Close(fd)
	c.leafDirs++
	err = c.dr.Each(fd, func(name []byte, typ uint8) error {
		if t, err := ResolveType(fd, name, typ); err == nil && t == unix.DT_REG {
			c.files++
		}
		return nil
	})
	if err != nil {
		c.fail(fmt.Errorf("read directory %s in %s: %w", name, c.dir, err))
	}
	return nil
}

func (c *fileCount) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// openCountDir opens a directory of the counted spool for reading, never
// through a symlink below the spool directory itself.
func openCountDir(dirfd int, name string) (int, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	if dirfd != unix.AT_FDCWD {
		flags |= unix.O_NOFOLLOW
	}
	return fileutil.Openat(dirfd, name, flags, 0)
}
