package fleet

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spoold/spoold/mib"
	"github.com/spoold/spoold/rrd"
)

// Files names the configuration files of a Generation and the poll
// interval its RRD layouts take as their step.
type Files struct {
	Targets  string   // the targets file (--targets); "" = no targets
	Profiles string   // the profiles file (--profiles); "": built-in profiles only
	MIBDirs  []string // MIB directories (--mib-dir)
	Step     time.Duration
}

// Generation is one loaded generation of the targets and profiles files.
// A reload (SIGHUP) builds a new one and swaps it in whole (Current); a
// bad file keeps the old one. A Generation is immutable.
type Generation struct {
	Targets []*Target
	byName  map[string]*Target
	step    time.Duration
	// MIBs resolves the MIB names of the built-in objects and of the MIB
	// directories; MIBErr is what of the directories did not load (the
	// rest did): the daemon logs it and carries on, spoold -t fails on it.
	MIBs   *mib.Resolver
	MIBErr error
	// SecretFiles are the "file:" secrets the targets file named, as
	// written there, each once.
	SecretFiles []string

	layouts sync.Map // layoutOf → rrd.Layout, made at the first Layout of a key of it
}

// Load reads the MIB directories (with m, if not nil: counted, and not
// parsed again if unchanged), the profiles file (if any) and the targets
// file of f.
func Load(f Files, m *mib.LoadCache) (*Generation, error) {
	res, mibErr := mib.Load(mib.Options{Dirs: f.MIBDirs}, nil, m)
	var profiles Profiles
	if f.Profiles != "" {
		p, err := LoadProfilesMIB(f.Profiles, res)
		if err != nil {
			return nil, err
		}
		profiles = p
	}
	var targets []*Target
	var secrets []string
	seen := map[string]bool{}
	if f.Targets != "" {
		t, err := loadTargets(f.Targets, profiles, func(path string) ([]byte, error) {
			if !seen[path] {
				seen[path] = true
				secrets = append(secrets, path)
			}
			return readSecretFile(path)
		})
		if err != nil {
			return nil, err
		}
		targets = t
	}
	g := &Generation{Targets: targets, byName: make(map[string]*Target, len(targets)), step: f.Step, MIBs: res, MIBErr: mibErr, SecretFiles: secrets}
	for _, t := range targets {
		g.byName[t.Name] = t
	}
	return g, nil
}

// Target returns the target named name.
func (g *Generation) Target(name string) (*Target, bool) {
	t, ok := g.byName[name]
	return t, ok
}

// Layout is the RRD layout of a key (a target's scalars, or a row of one
// of its tables): Target.RRDLayout with the poll interval as the step.
// The writer asks for it before each update of a file, so a layout is
// made once for each profile and table and shared by their keys: read
// it, never change it.
func (g *Generation) Layout(key string) (rrd.Layout, bool) {
	name, rest := SplitKey(key)
	t, ok := g.byName[name]
	if !ok {
		return rrd.Layout{}, false
	}
	of := layoutOf{p: t.Profile}
	if rest != "" {
		if of.table, ok = t.Profile.TableOf(rest); !ok {
			return rrd.Layout{}, false
		}
	}
	if l, ok := g.layouts.Load(of); ok {
		return l.(rrd.Layout), true
	}
	l, ok := t.RRDLayout(key, g.step)
	if ok {
		g.layouts.Store(of, l)
	}
	return l, ok
}

// layoutOf is what a key's RRD layout depends on in a Generation: its
// target's profile, and the table of a row key (nil: the scalars).
type layoutOf struct {
	p     *Profile
	table *Table
}

func (g *Generation) String() string { return fmt.Sprintf("%d targets", len(g.Targets)) }

// Current is the generation in use, read by the writer and the admin API
// while a reload swaps it. Its zero value holds none.
type Current struct{ p atomic.Pointer[Generation] }

// Get returns the generation in use (nil before the first Set).
func (c *Current) Get() *Generation { return c.p.Load() }

// Set puts g in use.
func (c *Current) Set(g *Generation) { c.p.Store(g) }

// Layout is the current generation's Layout: what the writer's
// Options.Layout takes.
func (c *Current) Layout(key string) (rrd.Layout, bool) { return c.Get().Layout(key) }
