package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"github.com/spoold/spoold/doctor"
	"github.com/spoold/spoold/internal/confine"
	"github.com/spoold/spoold/spool"
)

// runDoctor is `spoold doctor`: it examines the machine for the spool and
// RRD directories and prints findings with the command that changes each.
// Exit 0 when every finding is ok, 1 with warnings (or when the examination
// failed), 2 for usage errors.
func runDoctor(args []string, stdout, stderr io.Writer) int {
	o := doctor.DefaultOptions()
	so := spool.DefaultOptions()
	so.Dir, so.Levels = o.SpoolDir, o.Levels
	lo := o.Loader
	asJSON, landlock := false, defaultConfig().landlock
	fs := pflag.NewFlagSet("spoold doctor", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: spoold doctor [flags]\n\nExamines read-ahead, mount options, free space and inodes of the spool and\nRRD directories, whether spoold can create files in the RRD directory, the open-files limit, whether the kernel can confine the daemon (Landlock), the spool's size and the loader time\nit implies, and measures one RRD update on a cold sample file. Prints each\nfinding with the command that changes it. Exit 0: all ok; 1: warnings; 2: usage.\n\n")
		fs.PrintDefaults()
	}
	addSpoolFlags(fs, &so)
	addLoaderFlags(fs, &lo)
	fs.StringVar(&o.RRDDir, "rrd-dir", o.RRDDir, "directory of the RRD files (a sample file is created and removed in it)")
	fs.IntVar(&o.PollConcurrency, "poll-concurrency", o.PollConcurrency, "most SNMP polls in flight (one UDP socket each)")
	fs.IntVar(&o.Writers, "writers", o.Writers, "RRD files written in parallel")
	fs.BoolVar(&landlock, "landlock", landlock, "the daemon's --landlock: report whether it would confine its file access on this kernel")
	fs.BoolVar(&asJSON, "json", false, "print one JSON document instead of text")
	if code, ok := parseCommandFlags(fs, args, stderr); !ok {
		return code
	}
	if err := doctorUsageError(fs, lo.Validate(), o.PollConcurrency, o.Writers); err != nil {
		fmt.Fprintln(stderr, "spoold doctor:", err)
		return exitUsage
	}
	o.SpoolDir, o.Levels, o.Loader = so.Dir, so.Levels, lo
	st := confine.Probe(landlock)
	o.Landlock = &st
	rep, err := doctor.Run(o)
	if err != nil {
		fmt.Fprintln(stderr, "spoold doctor:", err)
		return exitError
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rep)
	} else {
		err = rep.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "spoold doctor:", err)
		return exitError
	}
	if rep.Warnings > 0 {
		return exitError
	}
	return exitOK
}

func doctorUsageError(fs *pflag.FlagSet, loaderErr error, concurrency, writers int) error {
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case loaderErr != nil:
		return loaderErr
	case concurrency < 1:
		return errors.New("--poll-concurrency must be at least 1")
	case writers < 1:
		return errors.New("--writers must be at least 1")
	}
	return nil
}
