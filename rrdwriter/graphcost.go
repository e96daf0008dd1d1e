package rrdwriter

import (
	"errors"
	"fmt"

	"github.com/spoold/spoold/rrd"
)

// What a graph costs, and the bounds Graph holds it to.
//
// librrd 1.7's rrd_graph fetches every data source of the file once per
// DEF: data_fetch looks each DEF up in a cache of fetches (im->rrd_map) that
// nothing ever fills, and rrd_fetch returns all of a file's data sources.
// One DEF per drawn data source, as Graph draws, therefore holds
// drawn × (data sources in the file) × rows values of 8 bytes at once: the
// square of the data source count when a graph draws a whole file (4,000
// data sources took more than 24 GB). The rows are the range divided by the
// step of the archive rrd_fetch picks, which for a fine archive and a long
// range is enormous even for one data source (a 1 s archive over 20 years
// is 631 million rows). Graph estimates that product before it calls
// librrd and refuses beyond GraphOptions.MaxBytes.
const (
	// DefaultGraphMaxDS is the most data sources one graph draws.
	DefaultGraphMaxDS = 32
	// DefaultGraphMaxBytes bounds the values librrd fetches for one graph.
	DefaultGraphMaxBytes = 256 << 20
)

// ErrNoDataSource is wrapped by Graph's error when o.DS names a data source
// the file does not have.
var ErrNoDataSource = errors.New("no such data source")

// ErrGraphTooLarge is wrapped by Graph's error when the graph asked for
// would draw more than GraphOptions.MaxDS data sources or fetch more than
// GraphOptions.MaxBytes.
var ErrGraphTooLarge = errors.New("graph too large")

// graphCost is the bytes librrd fetches to draw n data sources of fi.
func graphCost(n int, fi rrd.FileInfo, rras []rrd.RRADef, o GraphOptions) int64 {
	rows := rrd.FetchRows(rras, "AVERAGE", fi.Step, fi.Last, o.Start.Unix(), o.End.Unix())
	per := int64(len(fi.DS)) * 8
	if rows > (1<<62)/per/int64(max(n, 1)) {
		return 1 << 62
	}
	return int64(n) * per * rows
}

// graphSelect returns the data sources to draw: o.DS, each checked against
// the file, or (o.DS empty) the file's first ones, as many as o.MaxDS and
// o.MaxBytes allow. Its errors name no path: they reach HTTP clients.
func graphSelect(t *target, rras []rrd.RRADef, o GraphOptions) ([]string, error) {
	perDS := graphCost(1, t.info, rras, o)
	if o.Template != nil {
		return templateSelect(t, perDS, o)
	}
	if len(o.DS) == 0 {
		n := min(len(t.info.DS), o.MaxDS, int(min(o.MaxBytes/perDS, int64(len(t.info.DS)))))
		if n == 0 {
			return nil, fmt.Errorf("%w: one data source of this file over this range needs %s, more than the %s a graph may take; choose a shorter range",
				ErrGraphTooLarge, mib(perDS), mib(o.MaxBytes))
		}
		return t.template()[:n], nil
	}
	for _, name := range o.DS {
		if _, ok := t.index[name]; !ok {
			return nil, fmt.Errorf("%w %q: the file has %s", ErrNoDataSource, name, dsList(t.template()))
		}
	}
	switch cost := int64(len(o.DS)) * perDS; {
	case len(o.DS) > o.MaxDS:
		return nil, fmt.Errorf("%w: %d data sources named, at most %d per graph", ErrGraphTooLarge, len(o.DS), o.MaxDS)
	case cost > o.MaxBytes:
		return nil, fmt.Errorf("%w: %d data sources of a file with %d over this range need %s, more than the %s a graph may take; name at most %d with ds= or choose a shorter range",
			ErrGraphTooLarge, len(o.DS), len(t.info.DS), mib(cost), mib(o.MaxBytes), o.MaxBytes/perDS)
	}
	return o.DS, nil
}

// templateSelect checks o.Template against the file: every DEF's data
// source is one of the file's, and the DEFs (each one fetch of the whole
// file, see above) are at most o.MaxDS and fetch at most o.MaxBytes.
func templateSelect(t *target, perDS int64, o GraphOptions) ([]string, error) {
	ds := o.Template.DS()
	for _, name := range ds {
		if _, ok := t.index[name]; !ok {
			return nil, fmt.Errorf("%w %q for graph template %s: the file has %s", ErrNoDataSource, name, o.Template.Name, dsList(t.template()))
		}
	}
	switch cost := int64(len(ds)) * perDS; {
	case len(ds) > o.MaxDS:
		return nil, fmt.Errorf("%w: graph template %s has %d DEFs, at most %d per graph", ErrGraphTooLarge, o.Template.Name, len(ds), o.MaxDS)
	case cost > o.MaxBytes:
		return nil, fmt.Errorf("%w: graph template %s's %d DEFs of a file with %d data sources over this range need %s, more than the %s a graph may take; choose a shorter range",
			ErrGraphTooLarge, o.Template.Name, len(ds), len(t.info.DS), mib(cost), mib(o.MaxBytes))
	}
	return ds, nil
}

// dsList shows the first data source names of a file and how many it has.
func dsList(names []string) string {
	const show = 8
	if len(names) <= show {
		return fmt.Sprintf("%q", names)
	}
	return fmt.Sprintf("%q and %d more", names[:show], len(names)-show)
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
