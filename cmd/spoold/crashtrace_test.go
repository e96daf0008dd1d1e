package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/spoold/spoold/spool"
)

// crashTrace is what the crash trials keep to explain an entry lost or
// doubled: for each trial, the daemon's debug lines of each writer pass
// ("spool batch": the segments read, entries applied, segments queued for
// removal) and of each open segment closed ("spool segment closed": the
// bytes and entries the appender wrote to it), and the spool's segment
// files at the kill (inode and size). The ledger adds where it read each
// entry and what happened to each segment name.
type crashTrace struct {
	trials []trialTrace
}

type trialTrace struct {
	lines  []string            // the daemon's trace lines
	atKill map[string]fileStat // segment path → inode and size at the kill
}

type fileStat struct {
	ino  uint64
	size int64
}

// traceArgs are the daemon flags that make it log the trace lines.
var traceArgs = []string{"--log-level", "debug"}

// add records trial i's daemon output and the spool's files after its kill.
func (c *crashTrace) add(t *testing.T, r *ledgerRig, stderr string) {
	t.Helper()
	tt := trialTrace{atKill: map[string]fileStat{}}
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, `msg="spool batch"`) || strings.Contains(line, `msg="spool segment closed"`) ||
			strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			tt.lines = append(tt.lines, line)
		}
	}
	matches, _ := filepath.Glob(filepath.Join(r.dir, "spool", "?", "??", "*"))
	for _, m := range matches {
		if fi, err := os.Lstat(m); err == nil {
			tt.atKill[m] = fileStat{fi.Sys().(*syscall.Stat_t).Ino, fi.Size()}
		}
	}
	c.trials = append(c.trials, tt)
}

// report logs, for each segment file that held lost (or doubled)
// entries, which entries, when the ledger read them, what happened to the
// file's name, the file at each kill, and every trace line naming it or
// its key's passes in the trials it lived through.
func (c *crashTrace) report(t *testing.T, r *ledgerRig, what string, refs []spool.Ref) {
	t.Helper()
	type fileKey struct {
		path string
		ino  uint64
	}
	groups := map[fileKey][]spool.Ref{}
	var order []fileKey
	for _, ref := range refs {
		srcs, _ := r.ledger.provenance(ref)
		k := fileKey{"(not read by the ledger)", 0}
		if len(srcs) > 0 {
			k = fileKey{srcs[0].path, srcs[0].ino}
		}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], ref)
	}
	for _, k := range order {
		refs := groups[k]
		slices.SortFunc(refs, func(a, b spool.Ref) int { return cmp.Compare(a.Time, b.Time) })
		var b strings.Builder
		fmt.Fprintf(&b, "%d %s entries (poll times %d..%d) were read by the ledger in %s, inode %d\n",
			len(refs), what, refs[0].Time, refs[len(refs)-1].Time, k.path, k.ino)
		first, last := int32(len(c.trials)), int32(0)
		for _, ref := range refs {
			srcs, _ := r.ledger.provenance(ref)
			for _, s := range srcs {
				fmt.Fprintf(&b, "  entry %d: offset %d of %s (inode %d), written in trial %d\n", ref.Time, s.off, filepath.Base(s.path), s.ino, s.trial)
				first, last = min(first, s.trial), max(last, s.trial)
			}
		}
		_, events := r.ledger.provenance(refs[0])
		for path, evs := range events {
			for _, e := range evs {
				fmt.Fprintf(&b, "  name %s: %s\n", filepath.Base(path), e)
				if e.what == "deleted" || e.what == "renamed away" {
					last = max(last, e.trial)
				}
			}
		}
		name := filepath.Base(k.path)
		key := ""
		if ref, err := spool.ParseName(name); err == nil {
			for i := range r.o.devices {
				if spool.KeyHash(r.sim.Fleet().Name(i)) == ref.Hash {
					key = r.sim.Fleet().Name(i)
				}
			}
		}
		for i := first; i <= last+1 && int(i) < len(c.trials); i++ {
			tt := c.trials[i]
			if st, ok := tt.atKill[k.path]; ok {
				fmt.Fprintf(&b, "  at the kill of trial %d: inode %d, %d bytes\n", i, st.ino, st.size)
			} else {
				fmt.Fprintf(&b, "  at the kill of trial %d: no file of that name\n", i)
			}
			for _, line := range tt.lines {
				if strings.Contains(line, name) || key != "" && strings.Contains(line, "key="+key+" ") {
					fmt.Fprintf(&b, "    trial %d: %s\n", i, excerpt(line, name))
				}
			}
		}
		t.Log(b.String())
	}
}

// excerpt shortens a long trace line to its start, the part around name
// and its end.
func excerpt(line, name string) string {
	const keep = 300
	if len(line) <= 3*keep {
		return line
	}
	i := strings.Index(line, name)
	if i < 0 {
		return line[:keep] + " … " + line[len(line)-keep:]
	}
	from, to := max(keep, i-keep), min(len(line)-keep, i+len(name)+keep)
	if from >= to {
		return line
	}
	return line[:keep] + " … " + line[from:to] + " … " + line[len(line)-keep:]
}
