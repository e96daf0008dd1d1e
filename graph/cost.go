package graph

import (
	"errors"

	"github.com/spoold/spoold/rrd"
)

// What a graph costs, and the bounds Draw holds it to.
//
// librrd 1.7's rrd_graph fetches every data source of the file once per
// DEF: data_fetch looks each DEF up in a cache of fetches (im->rrd_map) that
// nothing ever fills, and rrd_fetch returns all of a file's data sources.
// One DEF per drawn data source, as Draw draws, therefore holds
// drawn × (data sources in the file) × rows values of 8 bytes at once: the
// square of the data source count when a graph draws a whole file (4,000
// data sources took more than 24 GB). The rows are the range divided by the
// step of the archive rrd_fetch picks, which for a fine archive and a long
// range is enormous even for one data source (a 1 s archive over 20 years
// is 631 million rows). Draw estimates that product before it calls
// librrd and refuses beyond Options.MaxBytes.
const (
	// DefaultMaxDS is the most data sources one graph draws.
	DefaultMaxDS = 32
	// DefaultMaxBytes bounds the values librrd fetches for one graph.
	DefaultMaxBytes = 256 << 20
)

// ErrNoDataSource is wrapped by Draw's error when o.DS names a data source
// the file does not have.
var ErrNoDataSource = errors.New("no such data source")

// ErrTooLarge is wrapped by Draw's error when the graph asked for
// would draw more than Options.MaxDS data sources or fetch more than
// Options.MaxBytes.
var ErrTooLarge = errors.New("graph too large")

// graphCost is the bytes librrd fetches to draw n data sources of fi.
func graphCost(n int, fi rrd.FileInfo, rras []rrd.RRADef, o Options) int64 {
	rows := rrd.FetchRows(rras, "AVERAGE", fi.Step, fi.Last, o.Start.Unix(), o.End.Unix())
	per := int64(len(fi.DS)) * 8
	if rows > (1<<62)/per/int64(max(n, 1)) {
		return 1 << 62
	}
	return int64(n) * per * rows
}
