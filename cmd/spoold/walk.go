package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/mib"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/rrd"
)

// runWalk is `spoold walk [flags] TARGET`: one discovery of a target of
// the targets file, with the daemon's flags and files, printed for people
// writing profiles. It writes nothing (no spool, no RRD file).
func runWalk(args []string, stdout, stderr io.Writer) int {
	cfg := defaultConfig()
	fs, groups := daemonFlags(&cfg)
	fs.SetOutput(stderr)
	fs.Usage = func() {}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprint(stdout, "usage: spoold walk [flags] TARGET\n\nDiscovers the tables of TARGET (a name of the --targets file) as the\ndaemon does, with the same files and flags, and prints how many rows\nanswered each column walked, the rows found, their instance names, keys and RRD files, the column alternatives chosen,\nthe rows filters dropped and why, and how the rows would be polled.\nIt writes nothing.\n\n")
			printDaemonUsage(stdout, groups)
			return exitOK
		}
		fmt.Fprintln(stderr, "spoold walk:", err)
		return exitUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "spoold walk: want one TARGET (a name of the targets file)")
		return exitUsage
	}
	if err := cfg.check(); err != nil {
		fmt.Fprintln(stderr, "spoold walk:", err)
		return exitUsage
	}
	f, err := fleet.Load(cfg.fleetFiles(), nil)
	if err != nil {
		fmt.Fprintln(stderr, "spoold walk:", err)
		return exitError
	}
	t, ok := f.Target(fs.Arg(0))
	if !ok {
		fmt.Fprintf(stderr, "spoold walk: no target %q in %s\n", fs.Arg(0), cfg.targetsFile)
		return exitError
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	disc, err := poller.Walk(ctx, cfg.poller, t)
	if err != nil {
		fmt.Fprintln(stderr, "spoold walk:", err)
		return exitError
	}
	printWalk(stdout, t, disc, cfg, f.MIBs)
	return exitOK
}

// printWalk prints what a discovery found.
func printWalk(w io.Writer, t *fleet.Target, disc *poller.Discovery, cfg config, res *mib.Resolver) {
	fmt.Fprintf(w, "%v\n", t)
	fmt.Fprintf(w, "discovery: %d requests in %.3fs (max-repetitions %d)\n", disc.Requests, disc.Duration.Seconds(), cfg.poller.MaxRepetitions)
	if len(t.Profile.DS) > 0 {
		fmt.Fprintf(w, "scalars: %d values, key %s, file %s\n", len(t.Profile.DS), t.Name, filepath.Join(cfg.writer.Dir, rrd.RRDPath(t.Name)))
	}
	if len(disc.Tables) == 0 {
		fmt.Fprintln(w, "no tables in profile", t.Profile.Name)
	}
	for i := range disc.Tables {
		printTable(w, &disc.Tables[i], cfg, res)
	}
}

func printTable(w io.Writer, td *poller.TableDiscovery, cfg config, res *mib.Resolver) {
	tb := td.Table
	instance := tb.InstanceText
	if instance == "" {
		instance = "index"
	}
	mode := "get"
	if cfg.poller.UsesBulk(td) {
		mode = "bulk"
	}
	index := "none"
	if tb.Index != "" {
		index = res.Name(tb.Index)
	}
	fmt.Fprintf(w, "\ntable %s: index %s, instance %s: %d rows polled (%s), %d filtered out", tb.Name, index, instance, len(td.Rows), mode, len(td.Filtered))
	if td.Truncated {
		fmt.Fprintf(w, ", truncated at --poll-max-table-rows=%d", cfg.poller.MaxTableRows)
	}
	fmt.Fprintln(w)
	walked := make([]string, len(td.Walked))
	for i, c := range td.Walked {
		walked[i] = fmt.Sprintf("%s %d", res.Name(c.OID), c.Rows)
	}
	fmt.Fprintf(w, "  rows answering each column walked: %s\n", strings.Join(walked, ", "))
	if td.Empty() {
		fmt.Fprintln(w, "  no rows: the device answers none of the columns walked")
		return
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  index\tinstance\tkey\trrd file\tcolumns")
	for _, r := range td.Rows {
		fmt.Fprintf(tw, "  %s\t%q\t%s\t%s\t%s\n", r.Index, r.Name, r.Key, filepath.Join(cfg.writer.Dir, rrd.RRDPath(r.Key)), chosenColumns(tb, &r, res))
	}
	for _, r := range td.Filtered {
		fmt.Fprintf(tw, "  %s\t%q\t(not polled)\t\t%s\n", r.Index, r.Name, r.Why)
	}
	tw.Flush()
}

// chosenColumns says which alternative each column of a row uses, where
// it has a choice or answered none.
func chosenColumns(tb *fleet.Table, r *poller.Row, res *mib.Resolver) string {
	var parts []string
	for i, c := range tb.Columns {
		switch a := r.Alternative()[i]; {
		case a < 0:
			parts = append(parts, c.Name+"=none answered (unknown)")
		case len(c.Alternatives) > 1:
			s := c.Name + "=" + res.Name(c.Alternatives[a])
			if a > 0 {
				s += " (fallback)"
			}
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return "as declared"
	}
	return strings.Join(parts, ", ")
}
