package loader

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/spool"
)

// walk is the state of one Run; only Run's goroutine touches it.
type walk struct {
	l         *Loader
	ctx       context.Context
	done      <-chan struct{}
	layout    spool.Levels
	dr        *spool.DirReader
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
	layout := l.sp.Levels()
	w := &walk{l: l, ctx: ctx, done: ctx.Done(), layout: layout, dr: spool.NewDirReader(),
		th: newThrottle(l.clock, &l.c, now), leafTotal: float64(layout.LeafDirs()),
		nextLog: now.Add(l.every)}
	w.dr.ForceUnknown = l.forceUnknown
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
	if err := w.l.sp.WalkTree(w.tree(), w); err != nil {
		return err
	}
	return w.ctx.Err()
}

// tree returns the spool-tree walk of this walk: it calls back Enter,
// Entry, Leaf and Problem.
func (w *walk) tree() *spool.TreeWalker {
	return &spool.TreeWalker{Levels: w.layout, Dirs: w.dr, OpenDir: w.openDir}
}

// Enter records the level directory on the current path and ends the
// walk if it was cancelled.
func (w *walk) Enter(depth int, name string) error {
	w.levels[depth-1] = name
	return w.cancelled()
}

// Leaf walks a leaf directory (walkLeafDir).
func (w *walk) Leaf(parent int, name string, idx int) error { return w.walkLeafDir(parent, name, idx) }

// Problem counts and logs a directory the walk could not read or open.
func (w *walk) Problem(what string, depth int, err error) { w.problem(what+" "+w.path(depth, ""), err) }

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
		w.problem("open directory "+w.path(w.layout.Depth(), ""), err)
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

// Entry handles an entry of the root or an intermediate directory that is
// not a level directory.
func (w *walk) Entry(depth int, name string, typ uint8) error {
	switch {
	case depth == 0 && typ == unix.DT_DIR && (name == spool.TmpDir || name == spool.QuarantineDir):
		return nil
	case depth == 0 && typ == unix.DT_REG && (name == spool.LockFile || name == spool.MarkerFile):
		return nil
	case typ == unix.DT_REG:
		reason := fmt.Sprintf("file at level %d, above the leaf directories", depth)
		if depth == 0 {
			reason = "file at the spool root, outside the level directories"
		}
		w.quarantine(depth, name, reason)
		return w.afterFile()
	}
	w.foreign(w.path(depth, name), typ)
	return nil
}

// openDir opens the directory name relative to dirfd (a directory of the
// spool, the spool's own first) for reading, never through a symlink (one
// swapped in after getdents said DT_DIR), with O_NOATIME while the kernel
// allows it (reading the spool writes no inode).
func (w *walk) openDir(dirfd int, name string) (int, error) {
	return w.l.noAtime.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
}

// path returns the path of name in the directory at depth on the current
// path (the directory itself when name is "").
func (w *walk) path(depth int, name string) string {
	return filepath.Join(w.l.sp.Dir(), w.rel(depth, name))
}

// rel is path relative to the spool directory.
func (w *walk) rel(depth int, name string) string {
	return filepath.Join(append(w.levels[:depth:depth], name)...)
}
