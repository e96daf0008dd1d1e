package rrdwriter

import (
	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/spool"
)

// RRD is the writer's boundary to the files. LibRRD is the real one, package
// rrd's functions; tests use a fake.
// Implementations must be safe for concurrent use on different paths; the
// writer never calls two methods on one path at once.
type RRD interface {
	// Create creates the RRD file at path from p, accepting updates after
	// start (Unix seconds), and the missing directories above it. It must
	// not replace an existing file: if path exists the error wraps
	// fs.ErrExist.
	Create(path string, p rrd.Layout, start int64) error
	// Info returns the file's last update time and data sources. A missing
	// file gives an error wrapping fs.ErrNotExist.
	Info(path string) (rrd.FileInfo, error)
	// Update applies rows in order with template naming the data source of
	// each value. Like librrd it may apply a prefix of rows and fail on the
	// first one it rejects; the error then carries librrd's message.
	// rows and their Values slices are the caller's again once it returns
	// (the writer reuses them): keep copies, if anything.
	Update(path string, template []string, rows []rrd.Row) error
}

// covers reports whether the entry's poll time is at or before the last
// update: librrd takes only later times.
func covers(fi *rrd.FileInfo, e *spool.Entry) bool {
	return e.Time < fi.Last || e.Time == fi.Last && e.Milli <= fi.LastMilli
}

// isLast reports whether the entry's poll time is the last update's.
func isLast(fi *rrd.FileInfo, e *spool.Entry) bool {
	return e.Time == fi.Last && (e.Milli == fi.LastMilli || fi.LastMilli == 999)
}

// LibRRD returns the RRD implementation that calls librrd: package rrd's
// functions, every file opened beneath the writer's RRD directory (an
// rrd.Root the writer opens on Options.Dir): a path that leads out of it
// through a symlink is refused with an error wrapping rrd.ErrOutside.
func LibRRD() RRD { return libRRD{} }

// libRRD without a root (until New gives it one) opens by name.
type libRRD struct{ root *rrd.Root }

// withRoot returns r with the root opened on dir if r is a libRRD
// without one
// (or a NativeRRD whose librrd calls have none).
func withRoot(r RRD, dir string) (RRD, error) {
	n, native := r.(*NativeRRD)
	l, ok := r.(libRRD)
	if native {
		l, ok = n.libRRD, true
	}
	if !ok || l.root != nil {
		return r, nil
	}
	root, err := rrd.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	if native {
		n.libRRD = libRRD{root: root}
		n.Files.Beneath(root)
		return n, nil
	}
	return libRRD{root: root}, nil
}

func (l libRRD) Create(path string, p rrd.Layout, start int64) error {
	if l.root == nil {
		return rrd.Create(path, p, start)
	}
	return l.root.Create(path, p, start)
}

func (l libRRD) Info(path string) (rrd.FileInfo, error) {
	if l.root == nil {
		return rrd.Info(path)
	}
	return l.root.Info(path)
}

func (l libRRD) Update(path string, template []string, rows []rrd.Row) error {
	if l.root == nil {
		return rrd.Update(path, template, rows)
	}
	return l.root.Update(path, template, rows)
}

// root returns the writer's RRD directory root, nil when its RRD is not
// librrd's.
func (w *Writer) root() *rrd.Root {
	if n, ok := w.o.RRD.(*NativeRRD); ok {
		return n.root
	}
	l, _ := w.o.RRD.(libRRD)
	return l.root
}

// openFile opens the RRD file at path with flags, beneath the RRD
// directory when the writer has its root.
func (w *Writer) openFile(path string, flags int) (int, error) {
	if r := w.root(); r != nil {
		return r.Open(path, flags)
	}
	return unix.Open(path, flags|unix.O_CLOEXEC, 0)
}
