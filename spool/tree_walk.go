// The tree walk: a spool's directory tree: its level directories
// in sorted order, so that the position of the current leaf among all
// possible leaves is the fraction of the hash space covered, with the
// entries of the root and the intermediate directories that are not level
// directories handed to the caller. It reads directories with getdents(2)
// into a reused buffer (DirReader) and never opens or stats a file (an
// lstat only for a d_type of DT_UNKNOWN). The loader's walk and CountFiles
// (tree_count.go, the doctor's count of a spool) are this one walk; what
// they do with a leaf is theirs. It starts no goroutines.

package spool

import (
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"
)

// TreeVisitor is what a walk does at each place of the tree. Depth 0 is the
// spool root; the leaves are at depth Levels.Depth().
type TreeVisitor interface {
	// Enter is called before the walk goes into the level directory name
	// at depth (1 for the first level); its error (a cancellation) ends
	// the walk.
	Enter(depth int, name string) error
	// Entry is an entry of the directory at depth (not a leaf) that is not
	// a level directory of the layout; typ is its d_type, resolved.
	Entry(depth int, name string, typ uint8) error
	// Leaf is the leaf directory name in the directory parent, the idx-th
	// of all possible leaves in sorted order (Levels.LeafIndex). It opens
	// and reads it itself.
	Leaf(parent int, name string, idx int) error
	// Problem reports a directory that could not be read or opened, at
	// depth; the walk goes on without it.
	Problem(what string, depth int, err error)
}

// TreeWalker walks one spool tree at a time.
type TreeWalker struct {
	Levels Levels
	Dirs   *DirReader
	// OpenDir opens the directory name relative to dirfd (the visitor's
	// choice of flags: no symlinks, no atime).
	OpenDir func(dirfd int, name string) (int, error)
}

// Walk walks the tree of the open spool root directory rootfd.
func (w *TreeWalker) Walk(rootfd int, v TreeVisitor) error { return w.level(rootfd, 0, 0, v) }

// WalkTree walks the spool's tree with w, from a descriptor of the spool
// directory of its own (opened relative to the one Open holds, so the
// spool's path is not resolved again). w.OpenDir opens each directory
// below relative to its parent. It returns the walk's error (a visitor's)
// as it is.
func (s *Spool) WalkTree(w *TreeWalker, v TreeVisitor) error {
	fd, err := s.noAtime.Openat(s.rootfd, ".", dirOpenFlags)
	if err != nil {
		return fmt.Errorf("open spool directory %s: %w", s.dir, err)
	}
	defer unix.Close(fd)
	return w.Walk(fd, v)
}

// OpenLeafDir opens the leaf directory with index i (Levels.LeafDir) for
// reading, beneath the spool directory through no symlink (beneath.go),
// without updating its atime where the kernel allows it. The caller
// closes the descriptor. A leaf not created yet gives an error wrapping
// fs.ErrNotExist.
func (s *Spool) OpenLeafDir(i int) (int, error) {
	rel := s.layout.LeafDir(i)
	fd, err := s.noAtime.OpenBeneath(s.rootfd, rel, unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return -1, fmt.Errorf("open spool directory %s: %w", s.dir+"/"+rel, s.dirRefused(err))
	}
	return fd, nil
}

// treeEntry is a directory entry of a non-leaf directory.
type treeEntry struct {
	name string
	typ  uint8
}

// level walks the directory fd at depth, whose leaf directories have
// indexes from prefix*16^(widths below) on: first the entries that are not
// level directories, then its level directories in sorted order.
func (w *TreeWalker) level(fd, depth, prefix int, v TreeVisitor) error {
	ents, err := w.readAll(fd)
	if err != nil {
		v.Problem("read directory", depth, err)
		return nil
	}
	var subdirs []string
	for _, e := range ents {
		if w.Levels.LevelDirName(depth, e.name) && e.typ == unix.DT_DIR {
			subdirs = append(subdirs, e.name)
			continue
		}
		if err := v.Entry(depth, e.name, e.typ); err != nil {
			return err
		}
	}
	slices.Sort(subdirs)
	for _, name := range subdirs {
		if err := v.Enter(depth+1, name); err != nil {
			return err
		}
		idx := prefix<<(4*w.Levels.Width(depth)) | hexValue(name)
		if depth+1 == w.Levels.Depth() {
			if err := v.Leaf(fd, name, idx); err != nil {
				return err
			}
			continue
		}
		sub, err := w.OpenDir(fd, name)
		if err != nil {
			v.Problem("open directory", depth+1, err)
			continue
		}
		err = w.level(sub, depth+1, idx, v)
		unix.Close(sub)
		if err != nil {
			return err
		}
	}
	return nil
}

// readAll reads the entries of a non-leaf directory, with their types
// resolved.
func (w *TreeWalker) readAll(fd int) ([]treeEntry, error) {
	var ents []treeEntry
	err := w.Dirs.Each(fd, func(name []byte, typ uint8) error {
		t, err := ResolveType(fd, name, typ)
		if errors.Is(err, unix.ENOENT) {
			return nil // gone meanwhile
		}
		if err != nil {
			return err
		}
		ents = append(ents, treeEntry{string(name), t})
		return nil
	})
	return ents, err
}

// hexValue returns the value of a level directory name (already validated).
func hexValue(s string) int {
	v := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= '9' {
			v = v<<4 | int(c-'0')
		} else {
			v = v<<4 | int(c-'a'+10)
		}
	}
	return v
}
