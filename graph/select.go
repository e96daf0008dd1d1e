package graph

import (
	"fmt"
	"slices"

	"github.com/spoold/spoold/rrd"
)

// graphSelect returns the data sources to draw: o.DS, each checked against
// the file, or (o.DS empty) the file's first ones, as many as o.MaxDS and
// o.MaxBytes allow. Its errors name no path: they reach HTTP clients.
func graphSelect(fi rrd.FileInfo, rras []rrd.RRADef, o Options) ([]string, error) {
	perDS := graphCost(1, fi, rras, o)
	names := dsNames(fi)
	if o.Template != nil {
		return templateSelect(fi, names, perDS, o)
	}
	if len(o.DS) == 0 {
		n := min(len(fi.DS), o.MaxDS, int(min(o.MaxBytes/perDS, int64(len(fi.DS)))))
		if n == 0 {
			return nil, fmt.Errorf("%w: one data source of this file over this range needs %s, more than the %s a graph may take; choose a shorter range",
				ErrTooLarge, mib(perDS), mib(o.MaxBytes))
		}
		return names[:n], nil
	}
	for _, name := range o.DS {
		if !slices.Contains(names, name) {
			return nil, fmt.Errorf("%w %q: the file has %s", ErrNoDataSource, name, dsList(names))
		}
	}
	switch cost := int64(len(o.DS)) * perDS; {
	case len(o.DS) > o.MaxDS:
		return nil, fmt.Errorf("%w: %d data sources named, at most %d per graph", ErrTooLarge, len(o.DS), o.MaxDS)
	case cost > o.MaxBytes:
		return nil, fmt.Errorf("%w: %d data sources of a file with %d over this range need %s, more than the %s a graph may take; name at most %d with ds= or choose a shorter range",
			ErrTooLarge, len(o.DS), len(fi.DS), mib(cost), mib(o.MaxBytes), o.MaxBytes/perDS)
	}
	return o.DS, nil
}

// templateSelect checks o.Template against the file: every DEF's data
// source is one of the file's, and the DEFs (each one fetch of the whole
// file, see above) are at most o.MaxDS and fetch at most o.MaxBytes.
func templateSelect(fi rrd.FileInfo, names []string, perDS int64, o Options) ([]string, error) {
	ds := o.Template.DS()
	for _, name := range ds {
		if !slices.Contains(names, name) {
			return nil, fmt.Errorf("%w %q for graph template %s: the file has %s", ErrNoDataSource, name, o.Template.Name, dsList(names))
		}
	}
	switch cost := int64(len(ds)) * perDS; {
	case len(ds) > o.MaxDS:
		return nil, fmt.Errorf("%w: graph template %s has %d DEFs, at most %d per graph", ErrTooLarge, o.Template.Name, len(ds), o.MaxDS)
	case cost > o.MaxBytes:
		return nil, fmt.Errorf("%w: graph template %s's %d DEFs of a file with %d data sources over this range need %s, more than the %s a graph may take; choose a shorter range",
			ErrTooLarge, o.Template.Name, len(ds), len(fi.DS), mib(cost), mib(o.MaxBytes))
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

// dsNames returns the file's data source names, in the file's order.
func dsNames(fi rrd.FileInfo) []string {
	names := make([]string, len(fi.DS))
	for i, ds := range fi.DS {
		names[i] = ds.Name
	}
	return names
}
