package main

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/spoold/spoold/admin"
	"github.com/spoold/spoold/graph"
	"github.com/spoold/spoold/loader"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdcached/spoolbackend"
	"github.com/spoold/spoold/rrdwriter"
)

// The daemon is what the admin server reads and asks (admin.Daemon).
var _ admin.Daemon = (*daemon)(nil)

// startAdmin starts the admin HTTP server unless --admin-listen is empty.
func (d *daemon) startAdmin() error {
	if d.cfg.adminListen == "" {
		return nil
	}
	o := admin.DefaultOptions()
	o.Listen, o.Token, o.Logger = d.cfg.adminListen, d.cfg.adminToken, d.component("admin")
	o.StatusMaxAge, o.GraphMaxDS, o.Profiling = d.cfg.adminCache, d.cfg.graphMaxDS, d.cfg.adminPprof
	if d.cfg.poller.Interval < o.Refresh {
		o.Refresh = max(d.cfg.poller.Interval, 5*time.Second)
	}
	// Show about 300 steps of the poll interval, at most a day.
	o.PageGraphSpan = min(300*d.cfg.poller.Interval, o.PageGraphSpan)
	o.Metrics = d.metricsRegistry()
	s := admin.NewServer(d, o)
	if err := s.Start(nil); err != nil {
		return fmt.Errorf("start admin server on %s: %w", d.cfg.adminListen, err)
	}
	d.admin = s
	d.log.Info("admin server listening", "url", "http://"+s.Addr()+"/")
	return nil
}

// metricsRegistry is the registry /metrics serves: the Go runtime's and the
// process's collectors, and the daemon's Status (admin.NewCollector, which
// exposes the packages' collectors over the snapshot /status shows).
func (d *daemon) metricsRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		admin.NewCollector(d, nil),
		poller.NewDiscoveryCollector(d.pl.DiscoveryStats),
		d.mibs,
		spoolbackend.NewCollector(d.proto.backend.BackendStats),
	)
	if d.native != nil {
		reg.MustRegister(rrd.NewHeaderCacheCollector(d.native.Files.Stats))
	}
	d.reg = reg
	return reg
}

// Status is a snapshot of every component for /status, /metrics and the page.
func (d *daemon) Status() admin.Status {
	werrs := d.wr.TargetErrors()
	byKey := make(map[string]*rrdwriter.TargetError, len(werrs))
	for i := range werrs {
		byKey[werrs[i].Key] = &werrs[i]
	}
	devices := d.pl.Statuses()
	targets := make([]admin.TargetStatus, 0, len(devices))
	fl := d.fleet.Get()
	for _, dev := range devices {
		ts := admin.NewTargetStatus(dev, byKey[dev.Name])
		if t, ok := fl.Target(dev.Name); ok {
			for _, g := range keyGraphs(t, dev.Name) {
				ts.Graphs = append(ts.Graphs, g.Name)
			}
			ts.TablesOnly = len(t.Profile.DS) == 0
		}
		targets = append(targets, ts)
	}
	st := admin.Status{
		Version: versionString(), Started: d.started, Settings: d.settings,
		Spool: d.sp.Stats(), Index: d.ix.Stats(), IndexOverflowed: d.ix.Overflowed(),
		Loader: d.ld.Stats(), LoaderNextRescan: d.ld.NextRescan(), Writer: d.wr.Stats(), WriterErrors: werrs, Shard: d.pl.ShardStatus(),
		PollInterval: d.cfg.poller.Interval, Targets: targets, Disk: d.disk.Status(), Landlock: *d.landlock.Load(),
	}
	if c := d.pl.LastCycle(); c.Seq > 0 {
		st.LastCycle = &c
	}
	return st
}

// Graph renders a configured target's graph, or one of its table rows',
// after flushing it (the writer walks the key's leaf first if the
// start-up walk has not).
func (d *daemon) Graph(ctx context.Context, key string, o graph.Options) ([]byte, error) {
	if _, _, _, err := d.graphKey(key); err != nil {
		return nil, err
	}
	return d.wr.Graph(ctx, key, o.Draw)
}

// FlushAll writes everything pending now (POST /flush).
func (d *daemon) FlushAll(ctx context.Context) error { return d.flushAll(ctx) }

// Orphans lists the keys whose entries wait in the spool for a profile.
func (d *daemon) Orphans() []string { return rrdwriter.Orphans(d.wr.TargetErrors()) }

// SetLoaderParams changes the running loader's throttle (POST /loader).
func (d *daemon) SetLoaderParams(p loader.Params) error {
	if err := d.ld.SetParams(p); err != nil {
		return err
	}
	d.log.Info("loader parameters changed", "loader_files", p.Files, "loader_sleep", p.Sleep,
		"loader_threshold", p.Threshold, "loader_cpu", p.CPU)
	return nil
}
