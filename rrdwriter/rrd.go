package rrdwriter

import (
	"github.com/spoold/spoold/spool"

	"math"
	"strconv"
	"time"
)

// RRD is the boundary to librrd. LibRRD is the real one; tests use a fake.
// Implementations must be safe for concurrent use on different paths; the
// writer never calls two methods on one path at once.
type RRD interface {
	// Create creates the RRD file at path from p, accepting updates after
	// start (Unix seconds), and the missing directories above it. It must
	// not replace an existing file: if path exists the error wraps
	// fs.ErrExist.
	Create(path string, p Profile, start int64) error
	// Info returns the file's last update time and data sources. A missing
	// file gives an error wrapping fs.ErrNotExist.
	Info(path string) (FileInfo, error)
	// Update applies rows in order with template naming the data source of
	// each value. Like librrd it may apply a prefix of rows and fail on the
	// first one it rejects; the error then carries librrd's message.
	Update(path string, template []string, rows []Row) error
	// Graph renders a PNG of the file's data sources ds.
	Graph(path string, ds []string, g GraphOptions) ([]byte, error)
}

// FileInfo describes an existing RRD file.
type FileInfo struct {
	Last int64 // last update, Unix seconds
	// LastMilli are the milliseconds of the last update (librrd keeps
	// microseconds); 999 when only whole seconds are known, so that an
	// entry of that second counts as applied.
	LastMilli uint16
	Step      time.Duration // base interval
	DS        []DSInfo      // in the file's order
}

// covers reports whether the entry's poll time is at or before the last
// update: librrd takes only later times.
func (fi *FileInfo) covers(e *spool.Entry) bool {
	return e.Time < fi.Last || e.Time == fi.Last && e.Milli <= fi.LastMilli
}

// isLast reports whether the entry's poll time is the last update's.
func (fi *FileInfo) isLast(e *spool.Entry) bool {
	return e.Time == fi.Last && (e.Milli == fi.LastMilli || fi.LastMilli == 999)
}

// DSInfo is a data source of an existing RRD file.
type DSInfo struct {
	Name string
	Type DSType
}

// Row is one update: a time and one formatted value per template name
// ("U" for unknown).
type Row struct {
	Time   int64  // Unix seconds
	Milli  uint16 // and milliseconds: librrd takes "<seconds>.<ms>"
	Values []string
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

// formatFloat formats v exactly: a whole number of magnitude up to 2^53 as
// an integer (librrd takes only integers for DERIVE, where a negative
// rrdcached value is spooled as a gauge), anything else as its shortest
// round-trip representation; NaN and ±Inf become "U": RRD cannot use them.
func formatFloat(v float64) string { return string(appendFloat(nil, v)) }

// maxExactInt is 2^53: every whole number up to it in magnitude is exact
// in a float64.
const maxExactInt = 1 << 53

// appendFloat appends v as formatFloat formats it.
func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return append(b, 'U')
	case v == math.Trunc(v) && math.Abs(v) <= maxExactInt:
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
