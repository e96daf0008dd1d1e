package graph

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/spoold/spoold/rrd"
)

// ForKey returns the templates that draw a key's file, whose data sources
// are ds, given its profile's own templates: those whose data sources the
// file has (the host profile's cpu, load, memory; an if-mib row's traffic,
// packets, errors), the built-in ones first, in their order (a profile's
// template of a built-in's name in its place), then the profile's others
// in the profiles file's order.
func ForKey(own []*Template, ds []string) []*Template {
	var out []*Template
	for _, g := range builtinGraphs {
		if k := slices.IndexFunc(own, func(o *Template) bool { return o.Name == g.Name }); k >= 0 {
			g = own[k]
		}
		if g.Fits(ds) {
			out = append(out, g)
		}
	}
	for _, g := range own {
		if !slices.ContainsFunc(out, func(o *Template) bool { return o.Name == g.Name }) && g.Fits(ds) {
			out = append(out, g)
		}
	}
	return out
}

// HasFile reports whether key's RRD file exists in the RRD directory dir.
// It looks the file up (lstat of dir + rrd.RRDPath(key)), never opens it:
// a key named by a URL that was never written has no graph, and asking
// cannot make the writer track it.
func HasFile(dir, key string) bool {
	_, err := os.Lstat(filepath.Join(dir, rrd.RRDPath(key)))
	return err == nil
}
