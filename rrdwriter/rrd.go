package rrdwriter

import (
	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/spool"
)

// RRD is the writer's boundary to the files. LibRRD is the real one, package
// rrd's Root methods; tests use a fake.
// Implementations must be safe for concurrent use on different paths; the
// writer never calls two methods on one path at once. A wrapper (one that
// meters the calls, say) embeds the RRD it wraps, and with it its Root.
type RRD interface {
	// Root is the RRD directory every file of this RRD is opened beneath:
	// the writer's own reads of the files (prefetch, sync, graphs) go
	// through it too. nil for an RRD whose files are not local (the
	// forwarder's, a test's fake): the writer then opens no file at all.
	Root() *rrd.Root
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
	// (the writer reuses them): keep copies, if anything. opened, if not
	// nil (only ever for an RRD with a Root), is called once with a
	// descriptor of the file, opened beneath Root, before the update
	// reads it: the writer's prefetch (prefetch.go) asks there for the
	// pages the update will touch. An update that opens the file for
	// itself passes its own descriptor; one that cannot (librrd opens its
	// files) opens the file once more for opened. opened neither closes
	// the descriptor nor moves its offset; it gives the hint against
	// read-ahead (FADV_RANDOM) there if the file is not in the page
	// cache, which an update without opened gives itself.
	Update(path string, template []string, rows []rrd.Sample, opened func(fd int)) error
}

// InfoUpdater is an RRD whose update can read the file's info itself: the
// writer's first update of a file it does not know yet (no info read
// since the start) opens and reads the file once instead of twice.
// NativeRRD is one; a wrapper of an RRD (a metering one, say) forwards to
// the one it wraps, or says planned false.
type InfoUpdater interface {
	// UpdateFor opens the file at path and, under the update's lock,
	// reads its info, calls rowsFor with it once and applies the rows it
	// returns (none: nothing is written), as Update applies rows given
	// in the file's data source order. planned says whether rowsFor was
	// called: if not, nothing was written or read for certain, and the
	// error, if any, need not be the file's (the writer reads the info
	// and updates the file the usual way, which says what is wrong).
	// Once rowsFor was called, the error is Update's for its rows.
	UpdateFor(path string, rowsFor rrd.RowsFor, opened func(fd int)) (planned bool, err error)
}

// lastUpdate returns the file's last update as a poll time.
func lastUpdate(fi *rrd.FileInfo) spool.PollTime {
	return spool.PollTime{Sec: fi.Last, Milli: fi.LastMilli}
}

// covers reports whether the entry's poll time is at or before the last
// update: librrd takes only later times.
func covers(fi *rrd.FileInfo, e *spool.Entry) bool {
	return e.PollTime().Compare(lastUpdate(fi)) <= 0
}

// isLast reports whether the entry's poll time is the last update's; when
// the file gives whole seconds only (LastMilli 999), any of its second is.
func isLast(fi *rrd.FileInfo, e *spool.Entry) bool {
	if fi.LastMilli == 999 {
		return e.Time == fi.Last
	}
	return e.PollTime() == lastUpdate(fi)
}

// LibRRD returns the RRD implementation that calls librrd: root's methods,
// every file opened beneath root's directory, so a path that leads out of
// it through a symlink (even one swapped in after the path was checked) is
// refused with an error wrapping rrd.ErrOutside. root must not be nil.
func LibRRD(root *rrd.Root) RRD { return libRRD{mustRoot(root)} }

// libRRD is LibRRD: the Root is its only field, so the methods below are
// the Root's.
type libRRD struct{ root *rrd.Root }

// mustRoot returns root, which a local RRD cannot be without.
func mustRoot(root *rrd.Root) *rrd.Root {
	if root == nil {
		panic("rrdwriter: a local RRD without the RRD directory's rrd.Root")
	}
	return root
}

func (l libRRD) Root() *rrd.Root { return l.root }

func (l libRRD) Create(path string, p rrd.Layout, start int64) error {
	return l.root.Create(path, p, start)
}

func (l libRRD) Info(path string) (rrd.FileInfo, error) { return l.root.Info(path) }

func (l libRRD) Update(path string, template []string, rows []rrd.Sample, opened func(fd int)) error {
	if opened != nil {
		if fd, err := l.root.OpenNoAtime(path); err == nil {
			opened(fd)
			unix.Close(fd)
		}
	}
	return l.root.Update(path, template, rows)
}
