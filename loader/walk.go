package loader

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/spool"
)

// walk is the state of one Run; only Run's goroutine touches it.
type walk struct {
	l         *Loader
	ctx       context.Context
	done      <-chan struct{}
	layout    spool.Layout
	dr        *dirReader
	th        *throttle
	levels    [spool.MaxLevels]string // level directory names on the current path
	leafTotal float64
	nextLog   time.Time // when the next progress line is due
	fullSeen  bool      // the index-full warning was logged
	onDemand  bool      // for EnsureLeaf or EnsureAll: no throttle, no progress
	others    []int     // leaves an EnsureAll walk found claimed by another walk
}

func (l *Loader) newWalk(ctx context.Context) *walk {
	now := l.clock.Now()
	l.c.reset(now)
	layout := l.sp.Layout()
	w := &walk{l: l, ctx: ctx, done: ctx.Done(), layout: layout, dr: newDirReader(),
		th: newThrottle(l.clock, &l.c, now), leafTotal: float64(layout.LeafDirs()),
		nextLog: now.Add(l.every)}
	w.dr.forceUnknown = l.forceUnknown
	return w
}

// run removes stale temp files and walks the tree from the root.
func (w *walk) run() error {
	if !w.l.dryRun {
		n, err := w.l.sp.RemoveStaleTemp()
		w.l.c.tempRemoved.Add(uint64(n))
		if err != nil {
			w.problem("remove stale temp files", err)
		}
	}
	root := w.l.sp.Dir()
	fd, err := w.openDir(unix.AT_FDCWD, root)
	if err != nil {
		return fmt.Errorf("walk spool %s: %w", root, err)
	}
	defer unix.Close(fd)
	if err := w.walkLevel(fd, 0, 0); err != nil {
		return err
	}
	return w.ctx.Err()
}

// dirent is a directory entry of a non-leaf directory.
type dirent struct {
	name string
	typ  uint8
}

// walkLevel walks the directory fd at depth (0 = the root), whose leaf
// directories have indexes from prefix*16^(widths below) on: it handles the
// files in it, then its level directories in sorted order.
func (w *walk) walkLevel(fd, depth, prefix int) error {
	ents, err := w.readAll(fd)
	if err != nil {
		w.problem("read directory "+w.path(depth, ""), err)
		return nil
	}
	var subdirs []string
	for _, e := range ents {
		if w.layout.LevelDirName(depth, e.name) && e.typ == unix.DT_DIR {
			subdirs = append(subdirs, e.name)
			continue
		}
		if err := w.nonLeafEntry(depth, e); err != nil {
			return err
		}
	}
	slices.Sort(subdirs)
	for _, name := range subdirs {
		if err := w.walkSubdir(fd, depth, prefix, name); err != nil {
			return err
		}
	}
	return nil
}

// walkSubdir walks the level directory name of the directory fd at depth.
func (w *walk) walkSubdir(fd, depth, prefix int, name string) error {
	if err := w.cancelled(); err != nil {
		return err
	}
	w.levels[depth] = name
	idx := prefix<<(4*w.layout.Width(depth)) | hexValue(name)
	if depth+1 == w.layout.Levels() {
		return w.walkLeafDir(fd, name, idx)
	}
	sub, err := w.openDir(fd, name)
	if err != nil {
		w.problem("open directory "+w.path(depth+1, ""), err)
		return nil
	}
	defer unix.Close(sub)
	return w.walkLevel(sub, depth+1, idx)
}

// walkLeafDir walks the leaf directory name of fd, the idx-th, if this
// walk is the one to (see claimLeaf), and marks it ready after; a walk
// cancelled in it gives the leaf back for another walk to take.
func (w *walk) walkLeafDir(fd int, name string, idx int) error {
	r := w.l.ready
	rescan := r.all.Load()
	if !rescan && !w.claimLeaf(idx) {
		return nil
	}
	sub, err := w.openDir(fd, name)
	if err != nil {
		w.problem("open directory "+w.path(w.layout.Levels(), ""), err)
	} else {
		err = w.walkLeaf(sub, idx) // only a cancellation
		unix.Close(sub)
	}
	switch {
	case rescan:
	case err != nil:
		r.release(idx)
	default:
		r.finish(idx)
	}
	return err
}

// claimLeaf reports whether this first walk (or EnsureAll) is to walk leaf
// idx: only if no other walk has claimed it. An EnsureAll walk notes the
// leaves others are walking, to wait for them.
func (w *walk) claimLeaf(idx int) bool {
	r := w.l.ready
	if w.onDemand && r.ready(idx) {
		return false
	}
	if !w.onDemand {
		r.pass(idx)
	}
	if r.claim(idx) {
		return true
	}
	if w.onDemand {
		w.others = append(w.others, idx)
	}
	return false
}

// nonLeafEntry handles an entry of the root or an intermediate directory
// that is not a level directory.
func (w *walk) nonLeafEntry(depth int, e dirent) error {
	switch {
	case depth == 0 && e.typ == unix.DT_DIR && (e.name == spool.TmpDir || e.name == spool.QuarantineDir):
		return nil
	case depth == 0 && e.typ == unix.DT_REG && (e.name == spool.LockFile || e.name == spool.MarkerFile):
		return nil
	case e.typ == unix.DT_REG:
		reason := fmt.Sprintf("file at level %d, above the leaf directories", depth)
		if depth == 0 {
			reason = "file at the spool root, outside the level directories"
		}
		w.quarantine(depth, e.name, reason)
		return w.afterFile()
	}
	w.foreign(w.path(depth, e.name), e.typ)
	return nil
}

// readAll reads the entries of a non-leaf directory, with their types
// resolved.
func (w *walk) readAll(fd int) ([]dirent, error) {
	var ents []dirent
	err := w.dr.each(fd, func(name []byte, typ uint8) error {
		t, err := resolveType(fd, name, typ)
		if errors.Is(err, unix.ENOENT) {
			return nil // gone meanwhile
		}
		if err != nil {
			return err
		}
		ents = append(ents, dirent{string(name), t})
		return nil
	})
	return ents, err
}

// openDir opens the directory name relative to dirfd for reading, never
// through a symlink (one swapped in after getdents said DT_DIR), with
// O_NOATIME while the kernel allows it (reading the spool writes no inode).
func (w *walk) openDir(dirfd int, name string) (int, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	if dirfd != unix.AT_FDCWD {
		flags |= unix.O_NOFOLLOW // the spool root itself may be a symlink
	}
	return w.l.noAtime.Openat(dirfd, name, flags)
}

// path returns the path of name in the directory at depth on the current
// path (the directory itself when name is "").
func (w *walk) path(depth int, name string) string {
	parts := append([]string{w.l.sp.Dir()}, w.levels[:depth]...)
	return filepath.Join(append(parts, name)...)
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
