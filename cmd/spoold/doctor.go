package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/spf13/pflag"
	"github.com/spoold/spoold/doctor"
	"github.com/spoold/spoold/internal/confine"
	"github.com/spoold/spoold/loader"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/spool"
)

// runDoctor is `spoold doctor`: it examines the machine for the spool and
// RRD directories and prints findings with the command that changes each.
// Exit 0 when every finding is ok, 1 with warnings (or when the examination
// failed), 2 for usage errors.
func runDoctor(args []string, stdout, stderr io.Writer) int {
	c := defaultConfig()
	so, lo := c.spool, c.loader.Params // the daemon's spool flags: --spool-dir, --levels and --segment-open-files count
	o := doctor.DefaultOptions()
	o.RRDDir, o.PollConcurrency, o.Writers = c.writer.Dir, c.poller.Concurrency, c.writer.Writers
	asJSON, landlock := false, c.landlock
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
	levels, err := spool.ParseLevels(so.Levels)
	if err != nil {
		fmt.Fprintln(stderr, "spoold doctor:", err)
		return exitUsage
	}
	st := confine.Probe(landlock)
	o.Landlock, o.SegmentOpenFiles = &st, so.SegmentOpenFiles
	rep, err := doctor.Run(doctorOptions(o, so.Dir, levels, lo))
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

// doctorOptions completes o with the spool at dir with levels, the loader
// settings lo, and the daemon's own ways to count a spool, check the RRD
// directory and create and update an RRD file.
func doctorOptions(o doctor.Options, dir string, levels spool.Levels, lo loader.Params) doctor.Options {
	o.SpoolDir = dir
	o.CountSpool = func(dir string) (uint64, int, error) { return spool.CountFiles(dir, levels) }
	o.Loader = doctor.LoaderSettings{Files: lo.Files, Sleep: lo.Sleep, Threshold: lo.Threshold, CPU: lo.CPU, Estimate: lo.EstimateLoad}
	o.CheckRRDDir = rrdwriter.CheckDir
	o.OpenSampleRRD = openDoctorRRD
	return o
}

// doctorRRD is the doctor's sample RRD: librrd, as the daemon's writer
// uses it, beneath the measurement's directory.
type doctorRRD struct {
	root *rrd.Root
	rrd  rrdwriter.RRD
	tmpl []string // the data sources of the file created
}

func openDoctorRRD(dir string) (doctor.SampleRRD, error) {
	root, err := rrd.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &doctorRRD{root: root, rrd: rrdwriter.LibRRD(root)}, nil
}

func (d *doctorRRD) Create(path string, ds int, step time.Duration, start int64) error {
	l := rrd.Layout{Step: step, RRAs: rrd.DefaultRRAs(step)}
	for i := range ds {
		l.DS = append(l.DS, rrd.DataSource{Name: fmt.Sprintf("ds%02d", i), Type: rrd.Gauge, Heartbeat: 2 * step, Min: 0, Max: math.NaN()})
	}
	d.tmpl = l.DSNames()
	return d.rrd.Create(path, l, start)
}

func (d *doctorRRD) Update(path string, t int64, values []string) error {
	return d.rrd.Update(path, d.tmpl, []rrd.Sample{{Time: t, Values: values}}, nil)
}

func (d *doctorRRD) Close() error { return d.root.Close() }
