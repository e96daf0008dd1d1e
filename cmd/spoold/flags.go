package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/spoold/spoold/loader"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

// Flag groups shared by the daemon and the sub-commands. Each value type
// validates at parse time, so a bad flag fails with the flag's name and the
// reason before anything starts.

func addSpoolFlags(fs *pflag.FlagSet, o *spool.Options) {
	fs.StringVar(&o.Dir, "spool-dir", o.Dir, "spool directory (poll results waiting for their RRD files)")
	fs.Var(&levelsValue{&o.Levels}, "levels", `spool directory levels in nginx's syntax: 1 to 3 levels of 1 or 2 hex characters, e.g. "1:2"`)
	fs.Var(&fsyncValue{&o.Fsync}, "fsync", "durability of spool writes: none (kernel writeback), batch (one syncfs per poll cycle), always (fsync every entry)")
	fs.Var(&sizeValue{&o.SegmentMaxBytes}, "segment-max-bytes", `close a target's open spool segment (start a new file) before it passes this size, nginx size syntax ("1m"; 4k to 64m)`)
	fs.IntVar(&o.SegmentMaxEntries, "segment-max-entries", o.SegmentMaxEntries, "close a target's open spool segment after this many poll results (1 = one file per poll, as before segments)")
	fs.Var(&sizeValue{&o.MemoryBytes}, "segment-memory", `memory that keeps what this process appended to spool segments until the writer reads it, so the writer does not read it back from disk, nginx size syntax (0 = read every segment from disk)`)
	fs.Var(&autoIntValue{p: &o.SegmentOpenFiles, auto: defaultSegmentOpenFiles}, "segment-open-files", `most open spool segments whose descriptor stays open between appends ("auto": half the open-files limit; 0 = open, append and close for each entry)`)
}

func addIndexFlags(fs *pflag.FlagSet, o *shm.Options) {
	fs.Var(&sizeValue{&o.MaxBytes}, "keys-zone", `memory for the index of pending entries, nginx size syntax ("64m"); when full, entries stay on disk until a rescan`)
}

func addLoaderFlags(fs *pflag.FlagSet, p *loader.Params) {
	fs.IntVar(&p.Files, "loader-files", p.Files, "nginx loader_files: the most spool entries indexed in one loader iteration")
	fs.DurationVar(&p.Sleep, "loader-sleep", p.Sleep, "nginx loader_sleep: pause between loader iterations (0 = unthrottled)")
	fs.DurationVar(&p.Threshold, "loader-threshold", p.Threshold, "nginx loader_threshold: the longest a loader iteration runs")
	fs.Var(&cpuValue{&p.CPU}, "loader-cpu", `hold the loader to this share of one core ("25%"), sizing iterations from its measured CPU time; replaces --loader-files and --loader-sleep (0 = off)`)
}

type levelsValue struct{ p *string }

func (v *levelsValue) String() string { return *v.p }
func (v *levelsValue) Type() string   { return "levels" }
func (v *levelsValue) Set(s string) error {
	if _, err := spool.ParseLevels(s); err != nil {
		return err
	}
	*v.p = s
	return nil
}

type fsyncValue struct{ p *spool.FsyncPolicy }

func (v *fsyncValue) String() string { return v.p.String() }
func (v *fsyncValue) Type() string   { return "policy" }
func (v *fsyncValue) Set(s string) (err error) {
	*v.p, err = spool.ParseFsyncPolicy(s)
	return err
}

type rrdSyncValue struct{ p *rrdwriter.SyncPolicy }

func (v *rrdSyncValue) String() string { return v.p.String() }
func (v *rrdSyncValue) Type() string   { return "policy" }
func (v *rrdSyncValue) Set(s string) (err error) {
	*v.p, err = rrdwriter.ParseSyncPolicy(s)
	return err
}

type sizeValue struct{ p *int64 }

func (v *sizeValue) String() string { return formatSize(*v.p) }
func (v *sizeValue) Type() string   { return "size" }
func (v *sizeValue) Set(s string) (err error) {
	*v.p, err = shm.ParseSize(s)
	return err
}

// formatSize writes a size the way ParseSize reads it, in the largest exact unit.
func formatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// autoIntValue is a count whose default, "auto", is worked out from the
// machine (auto()).
type autoIntValue struct {
	p    *int
	auto func() int
}

func (v *autoIntValue) String() string {
	if *v.p == v.auto() {
		return "auto"
	}
	return strconv.Itoa(*v.p)
}
func (v *autoIntValue) Type() string { return "int" }
func (v *autoIntValue) Set(s string) error {
	if s == "auto" {
		*v.p = v.auto()
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("parse %q: want a whole number or auto", s)
	}
	*v.p = n
	return nil
}

type cpuValue struct{ p *float64 }

func (v *cpuValue) String() string {
	if *v.p == 0 {
		return "0"
	}
	return strconv.FormatFloat(*v.p*100, 'f', -1, 64) + "%"
}
func (v *cpuValue) Type() string { return "share" }
func (v *cpuValue) Set(s string) (err error) {
	*v.p, err = loader.ParseCPU(s)
	return err
}

// seconds formats a duration for JSON summaries.
func seconds(d time.Duration) float64 {
	return float64(d.Round(time.Microsecond)) / float64(time.Second)
}

// parseCommandFlags parses a sub-command's flags. When it returns false the
// command is over and code is its exit code: 0 after --help (pflag printed
// the usage), 2 with the error printed as "<fs name>: <error>".
func parseCommandFlags(fs *pflag.FlagSet, args []string, stderr io.Writer) (code int, ok bool) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return exitOK, true
	case errors.Is(err, pflag.ErrHelp):
		return exitOK, false
	}
	fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
	return exitUsage, false
}
