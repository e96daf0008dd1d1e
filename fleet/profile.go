package fleet

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/spoold/spoold/graph"
	"github.com/spoold/spoold/mib"
	"github.com/spoold/spoold/rrd"
)

// DS is one value of a profile: the OID polled and the RRD data source it
// goes to (its name, 1 to 19 of [A-Za-z0-9_], type, and Min and Max, NaN
// when unbounded: rrdtool's U). The heartbeat is left zero here: a key's
// layout (Target.RRDLayout) sets it from the poll interval.
type DS struct {
	rrd.DataSource
	OID string // numeric, without a leading dot: "1.3.6.1.2.1.31.1.1.1.6.1"
}

// Profile is what is polled from a device: its scalar data sources in
// order (the target's own key) and its tables (a key per row). The RRD
// layout of each key follows from it (Target.RRDLayout, an rrd.Layout). A
// Profile is immutable once built.
type Profile struct {
	Name   string
	DS     []DS
	Tables []*Table
	// Graphs are the profile's graph templates ("graph" blocks, and those
	// of the profiles it uses), offered beside the built-in ones to each
	// key whose data sources they fit; one named as a built-in replaces
	// it for this profile.
	Graphs []*graph.Template
	// RRAs are the archives of the files this profile's keys create
	// ("rra" lines, or those of the profile it uses); none: the daemon's
	// default archives of its step.
	RRAs []string
}

// OIDs returns the profile's OIDs in DS order.
func (p *Profile) OIDs() []string {
	oids := make([]string, len(p.DS))
	for i, d := range p.DS {
		oids[i] = d.OID
	}
	return oids
}

// Well-known OIDs.
const (
	oidIfHCInOctets      = "1.3.6.1.2.1.31.1.1.1.6"
	oidIfHCInUcastPkts   = "1.3.6.1.2.1.31.1.1.1.7"
	oidIfHCOutOctets     = "1.3.6.1.2.1.31.1.1.1.10"
	oidIfHCOutUcastPkts  = "1.3.6.1.2.1.31.1.1.1.11"
	maxBuiltinInterfaces = 1000
)

// IfMIBProfile returns the built-in profile "if-mib:<n>": the 64-bit IF-MIB
// counters ifHCInOctets, ifHCOutOctets, ifHCInUcastPkts and
// ifHCOutUcastPkts of interfaces 1..n (ifIndex), as COUNTER data sources
// named in<i>, out<i>, inpkt<i> and outpkt<i>. n is 1..1000.
func IfMIBProfile(n int) (*Profile, error) {
	if n < 1 || n > maxBuiltinInterfaces {
		return nil, fmt.Errorf("build profile if-mib:%d: interfaces must be 1..%d", n, maxBuiltinInterfaces)
	}
	p := &Profile{Name: "if-mib:" + strconv.Itoa(n), DS: make([]DS, 0, 4*n)}
	cols := []struct{ prefix, oid string }{
		{"in", oidIfHCInOctets}, {"out", oidIfHCOutOctets},
		{"inpkt", oidIfHCInUcastPkts}, {"outpkt", oidIfHCOutUcastPkts},
	}
	for i := 1; i <= n; i++ {
		for _, c := range cols {
			p.DS = append(p.DS, DS{OID: c.oid + "." + strconv.Itoa(i), DataSource: rrd.DataSource{
				Name: c.prefix + strconv.Itoa(i), Type: rrd.Counter, Min: 0, Max: math.NaN(),
			}})
		}
	}
	return p, nil
}

// Profiles is a set of profiles by name.
type Profiles map[string]*Profile

// Lookup returns the named profile: one of the set, or a built-in
// ("host", "if-mib", "if-mib:<n>").
func (ps Profiles) Lookup(name string) (*Profile, error) {
	if p, ok := ps[name]; ok {
		return p, nil
	}
	return builtinProfile(name)
}

// Names returns the names of the set, sorted.
func (ps Profiles) Names() []string {
	names := make([]string, 0, len(ps))
	for n := range ps {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func builtinProfile(name string) (*Profile, error) {
	if p, ok := builtinProfiles()[name]; ok {
		return p, nil
	}
	if rest, ok := strings.CutPrefix(name, "if-mib:"); ok {
		n, err := strconv.Atoi(rest)
		if err != nil {
			return nil, fmt.Errorf("look up profile %q: interface count %q is not a number", name, rest)
		}
		return IfMIBProfile(n)
	}
	return nil, fmt.Errorf("look up profile %q: no such profile (built-in: host, if-mib, if-mib:<n>)", name)
}

// normalizeOID checks a numeric OID and returns it without a leading dot
// (mib.ParseOID's rules).
func normalizeOID(s string) (string, error) { return mib.ParseOID(s) }
