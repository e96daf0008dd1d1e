package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spoold/spoold/admin"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/rrdwriter"
)

// The admin API's graph keys and templates (admin.Backend.Graph,
// GraphTemplate and Rows).

// graphKey returns the configured target of key, a target's name or a row
// key of one of its tables (poller.Target.KeyDS), and key's data sources.
// A row key must have its RRD file already: a URL cannot make the writer
// track keys that were never written (the file is looked up, never
// opened, through rrdwriter.RRDPath).
func (d *daemon) graphKey(key string) (*poller.Target, []string, error) {
	name, _ := poller.SplitKey(key)
	t, ok := d.fleet.get().byName[name]
	var ds []poller.DS
	if ok {
		ds, ok = t.KeyDS(key)
	}
	if ok && key != name {
		_, err := os.Lstat(filepath.Join(d.cfg.writer.Dir, rrdwriter.RRDPath(key)))
		ok = err == nil
	}
	if !ok {
		return nil, nil, fmt.Errorf("graph %q: %w", key, admin.ErrUnknownTarget)
	}
	names := make([]string, len(ds))
	for i, x := range ds {
		names[i] = x.Name
	}
	return t, names, nil
}

// keyGraphs returns the built-in graph templates that draw key's file, a
// key of t: those whose data sources its profile gives it (the host
// profile's cpu, load, memory; an if-mib row's traffic, packets, errors).
func keyGraphs(t *poller.Target, key string) []*rrdwriter.GraphTemplate {
	ds, ok := t.KeyDS(key)
	if !ok {
		return nil
	}
	names := make([]string, len(ds))
	for i, x := range ds {
		names[i] = x.Name
	}
	var out []*rrdwriter.GraphTemplate
	for _, g := range rrdwriter.BuiltinGraphTemplates() {
		if g.Fits(names) {
			out = append(out, g)
		}
	}
	return out
}

// GraphTemplate returns key's template of that name, with the target's
// name and the row's instance name (from its key segment) for the title.
func (d *daemon) GraphTemplate(key, name string) (*rrdwriter.GraphTemplate, rrdwriter.GraphVars, error) {
	t, _, err := d.graphKey(key)
	if err != nil {
		return nil, rrdwriter.GraphVars{}, err
	}
	vars := rrdwriter.GraphVars{Target: t.Name, Key: key}
	if key != t.Name {
		seg := key[strings.LastIndexByte(key, '/')+1:]
		if vars.Instance, _ = poller.InstanceName(seg); vars.Instance == "" {
			vars.Instance = seg
		}
	}
	for _, g := range keyGraphs(t, key) {
		if g.Name == name {
			return g, vars, nil
		}
	}
	return nil, rrdwriter.GraphVars{}, fmt.Errorf("graph template %q of %q: %w", name, key, admin.ErrUnknownTemplate)
}

// Rows lists a configured target's table rows: none until the poller
// lists the rows its discovery found.
func (d *daemon) Rows(target string) ([]admin.RowStatus, error) {
	if _, ok := d.fleet.get().byName[target]; !ok {
		return nil, fmt.Errorf("rows of %q: %w", target, admin.ErrUnknownTarget)
	}
	return nil, nil
}
