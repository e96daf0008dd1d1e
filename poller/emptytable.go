package poller

import (
	"slices"
	"strings"

	"github.com/spoold/spoold/mib"
)

// A table of an answering device without a row is never empty in
// silence: an agent that answers none of the columns discovery walks (no
// IF-MIB, a view that hides it, a profile that names columns the agent
// does not have) would otherwise be polled for its scalars only, reported
// ok, and write nothing of its tables.

// noteEmptyTables records in d's status the tables in which disc found no
// row (TableDiscovery.Empty), and warns of each once, when it becomes
// empty: at d's first discovery, or at the rediscovery that finds every
// row gone. A table that has rows again is logged at info.
func (p *Poller) noteEmptyTables(d *device, disc *Discovery) {
	var empty []string
	for i := range disc.Tables {
		if disc.Tables[i].Empty() {
			empty = append(empty, disc.Tables[i].Table.Name)
		}
	}
	d.mu.Lock()
	was := d.st.EmptyTables
	d.st.EmptyTables = empty // a new slice each time: status copies share it
	d.mu.Unlock()
	for i := range disc.Tables {
		td := &disc.Tables[i]
		switch name := td.Table.Name; {
		case td.Empty() && !slices.Contains(was, name):
			p.log.Warn("table has no rows: the device answers none of the columns discovery walks",
				"target", d.t.Name, "table", name, "columns", walkedNames(td))
		case !td.Empty() && slices.Contains(was, name):
			p.log.Info("table has rows again", "target", d.t.Name, "table", name, "rows", len(td.Rows))
		}
	}
}

// walkedNames lists the columns td's discovery walked, by MIB name.
func walkedNames(td *TableDiscovery) string {
	names := make([]string, len(td.Walked))
	for i, w := range td.Walked {
		names[i] = mib.Builtin().Name(w.OID)
	}
	return strings.Join(names, ", ")
}
