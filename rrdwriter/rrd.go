package rrdwriter

import (
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
// functions.
func LibRRD() RRD { return libRRD{} }

type libRRD struct{}

func (libRRD) Create(path string, l rrd.Layout, start int64) error { return rrd.Create(path, l, start) }
func (libRRD) Info(path string) (rrd.FileInfo, error)              { return rrd.Info(path) }
func (libRRD) Update(path string, template []string, rows []rrd.Row) error {
	return rrd.Update(path, template, rows)
}
