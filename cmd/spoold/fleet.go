package main

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/poller/mib"
	"github.com/spoold/spoold/rrd"
)

// fleet is one loaded generation of the targets and profiles files. SIGHUP
// builds a new one and swaps it in whole; a bad file keeps the old one.
type fleet struct {
	targets []*poller.Target
	byName  map[string]*poller.Target
	step    time.Duration
	// mibs resolves the MIB names of the built-in objects and of
	// --mib-dir; mibErr is what of --mib-dir did not load (the rest did):
	// the daemon logs it and carries on, spoold -t fails on it.
	mibs   *mib.Resolver
	mibErr error
}

// loadFleet reads the MIB directories (with m, if not nil: counted, and
// not parsed again if unchanged), the profiles file (if any) and the
// targets file.
func loadFleet(cfg *config, m *mib.Loader) (*fleet, error) {
	res, mibErr := mib.Load(mib.Options{Dirs: cfg.mibDirs}, nil, m)
	var profiles poller.Profiles
	if cfg.profilesFile != "" {
		p, err := poller.LoadProfilesMIB(cfg.profilesFile, res)
		if err != nil {
			return nil, err
		}
		profiles = p
	}
	targets, err := poller.LoadTargets(cfg.targetsFile, profiles)
	if err != nil {
		return nil, err
	}
	f := &fleet{targets: targets, byName: make(map[string]*poller.Target, len(targets)), step: cfg.poller.Interval, mibs: res, mibErr: mibErr}
	for _, t := range targets {
		f.byName[t.Name] = t
	}
	return f, nil
}

// rrdLayout is the RRD layout of a key (a target's scalars, or a row of
// one of its tables): poller.Target.RRDLayout with the poll interval as
// the step.
func (f *fleet) rrdLayout(key string) (rrd.Layout, bool) {
	name, _ := poller.SplitKey(key)
	t, ok := f.byName[name]
	if !ok {
		return rrd.Layout{}, false
	}
	return t.RRDLayout(key, f.step)
}

// fleetHolder is the current fleet, read by the writer and the admin API
// while SIGHUP swaps it.
type fleetHolder struct{ p atomic.Pointer[fleet] }

func (h *fleetHolder) get() *fleet  { return h.p.Load() }
func (h *fleetHolder) set(f *fleet) { h.p.Store(f) }

func (h *fleetHolder) rrdLayout(key string) (rrd.Layout, bool) {
	return h.get().rrdLayout(key)
}

func (f *fleet) String() string { return fmt.Sprintf("%d targets", len(f.targets)) }
