package main

import (
	"fmt"
	"strings"

	"github.com/spoold/spoold/admin"
	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/graph"
	"github.com/spoold/spoold/poller"
)

// The admin API's graph keys and templates (admin.Daemon.Graph,
// GraphTemplate and Rows).

// graphKey returns the configured target of key, a target's name or a row
// key of one of its tables (fleet.Target.KeyDS), key's data sources, and
// the row the poller lists for a row key (a discovered or gone row; zero
// if it lists none). A row key the poller does not list must have its RRD
// file already (a row gone before this process started): a URL cannot
// make the writer track keys that were never written (graph.HasFile).
func (d *daemon) graphKey(key string) (*fleet.Target, []string, poller.RowStatus, error) {
	name, _ := fleet.SplitKey(key)
	t, ok := d.fleet.Get().Target(name)
	var ds []fleet.DS
	if ok {
		ds, ok = t.KeyDS(key)
	}
	var row poller.RowStatus
	if ok && key != name {
		if row, ok = d.row(name, key); !ok {
			ok = graph.HasFile(d.cfg.writer.Dir, key)
		}
	}
	if !ok {
		return nil, nil, poller.RowStatus{}, fmt.Errorf("graph %q: %w", key, admin.ErrUnknownTarget)
	}
	return t, fleet.DSNames(ds), row, nil
}

// row returns the row of target whose key is key, as the poller lists it.
func (d *daemon) row(target, key string) (poller.RowStatus, bool) {
	rows, _ := d.pl.Rows(target)
	for _, r := range rows {
		if r.Key == key {
			return r, true
		}
	}
	return poller.RowStatus{}, false
}

// keyGraphs returns the graph templates that draw key's file, a key of t
// (graph.ForKey of its data sources and its profile's templates).
func keyGraphs(t *fleet.Target, key string) []*graph.Template {
	ds, ok := t.KeyDS(key)
	if !ok {
		return nil
	}
	return graph.ForKey(t.Profile.Graphs, fleet.DSNames(ds))
}

// GraphTemplate returns key's template of that name, with the target's
// name and the row's instance name and alias (as the poller lists the row;
// a row it does not list: the name its key segment gives) for the title.
func (d *daemon) GraphTemplate(key, name string) (*graph.Template, graph.Vars, error) {
	t, _, row, err := d.graphKey(key)
	if err != nil {
		return nil, graph.Vars{}, err
	}
	vars := graph.Vars{Target: t.Name, Key: key, Instance: row.Name, Alias: row.Alias}
	if key != t.Name && vars.Instance == "" {
		vars.Instance = rowInstance(key)
	}
	for _, g := range keyGraphs(t, key) {
		if g.Name == name {
			return g, vars, nil
		}
	}
	return nil, graph.Vars{}, fmt.Errorf("graph template %q of %q: %w", name, key, admin.ErrUnknownTemplate)
}

// rowInstance returns the instance name of a row key as its key segment
// gives it, or the segment itself.
func rowInstance(key string) string {
	seg := key[strings.LastIndexByte(key, '/')+1:]
	if n, ok := fleet.InstanceName(seg); ok && n != "" {
		return n
	}
	return seg
}

// Rows lists a configured target's table rows as the poller knows them
// (poller.Poller.Rows): its last discovery's, then the gone ones, each
// with the graph templates of its file. A target of another shard has
// none.
func (d *daemon) Rows(target string) ([]admin.RowStatus, error) {
	t, ok := d.fleet.Get().Target(target)
	if !ok {
		return nil, fmt.Errorf("rows of %q: %w", target, admin.ErrUnknownTarget)
	}
	rows, _ := d.pl.Rows(target)
	out := make([]admin.RowStatus, 0, len(rows))
	for _, r := range rows {
		rs := admin.RowStatus{Key: r.Key, Instance: r.Name, Alias: r.Alias, State: r.State}
		if rs.Instance == "" {
			rs.Instance = rowInstance(r.Key)
		}
		for _, g := range keyGraphs(t, r.Key) {
			rs.Graphs = append(rs.Graphs, g.Name)
		}
		out = append(out, rs)
	}
	return out, nil
}
