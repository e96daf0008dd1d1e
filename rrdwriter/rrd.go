package rrdwriter

import (
	"time"

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
	// Graph renders a PNG of the file's data sources ds.
	Graph(path string, ds []string, g GraphOptions) ([]byte, error)
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

// GraphOptions say what Graph draws. With a Template, DS is ignored and the
// template's DEFs are the data sources drawn. Without one, DS empty means
// the file's first data sources, as many as MaxDS and MaxBytes allow. Zero
// Start/End mean the last day; zero Width/Height mean 600×200; zero MaxDS
// and MaxBytes mean DefaultGraphMaxDS and DefaultGraphMaxBytes (see
// graphcost.go).
type GraphOptions struct {
	DS            []string
	Start, End    time.Time
	Width, Height int
	Title         string
	// Template, when set, is how the graph is drawn (a built-in or a
	// profile's); nil draws each data source of DS as a line. Vars are
	// the values its title and legends name.
	Template *GraphTemplate
	Vars     GraphVars
	MaxDS    int   // most data sources drawn (DEFs of a template)
	MaxBytes int64 // most bytes of values librrd may fetch
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

// Graph draws o.Template, or without one each of ds as a line; ds are the
// data sources the template's DEFs name (Writer.Graph checked them).
func (libRRD) Graph(path string, ds []string, o GraphOptions) ([]byte, error) {
	t := o.Template
	if t == nil {
		t = lineTemplate(ds)
	}
	return rrd.Graph(path, t.render(path, o))
}
