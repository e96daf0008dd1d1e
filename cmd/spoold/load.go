package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"github.com/spoold/spoold/loader"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
	"golang.org/x/sys/unix"
)

// loadSummary is the one-line JSON that `spoold load` prints at the end.
type loadSummary struct {
	Entries         uint64  `json:"entries"`
	WouldQuarantine uint64  `json:"would_quarantine"`
	Seconds         float64 `json:"seconds"`
	CPUSeconds      float64 `json:"cpu_seconds"`
	CPUShare        float64 `json:"cpu_share"`
	Files           uint64  `json:"files"`
	Existing        uint64  `json:"existing"`
	Full            uint64  `json:"full"`
	Errors          uint64  `json:"errors"`
	StaleTemp       uint64  `json:"stale_temp"`
	LeafDirs        int     `json:"leaf_dirs"`
	Iterations      uint64  `json:"iterations"`
	Sleeps          uint64  `json:"sleeps"`
	SleptSeconds    float64 `json:"slept_seconds"`
	EntriesPerSec   float64 `json:"entries_per_second"`
	FormulaSeconds  float64 `json:"formula_seconds"`
	IndexHeapBytes  int64   `json:"index_bytes"`
}

func runLoad(args []string, stdout, stderr io.Writer) int {
	so := spool.DefaultOptions()
	so.Dir = "/var/spool/spoold"
	lo := loader.DefaultOptions()
	xo := shm.DefaultOptions()
	fs := pflag.NewFlagSet("spoold load", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: spoold load [flags]\n\nWalks a spool directory as spoold's start-up loader does, with the same\nthrottle, and prints a JSON summary. It changes nothing on disk:\nthe files the daemon would move to <spool-dir>/quarantine/ (bad names,\nmisplaced entries) are logged with their reason and counted.\n\n")
		fs.PrintDefaults()
	}
	addSpoolFlags(fs, &so)
	addIndexFlags(fs, &xo)
	addLoaderFlags(fs, &lo.Params)
	fs.DurationVar(&lo.ProgressEvery, "progress-every", lo.ProgressEvery, "interval of progress lines on stderr (0 = none)")
	if code, ok := parseCommandFlags(fs, args, stderr); !ok {
		return code
	}
	if err := lo.Params.Validate(); err != nil {
		fmt.Fprintln(stderr, "spoold load:", err)
		return exitUsage
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	so.Logger, lo.Logger = logger, logger
	sum, err := load(so, xo, lo)
	if err != nil {
		fmt.Fprintln(stderr, "spoold load:", err)
		return exitError
	}
	line, _ := json.Marshal(sum)
	fmt.Fprintln(stdout, string(line))
	return exitOK
}

func load(so spool.Options, xo shm.Options, lo loader.Options) (loadSummary, error) {
	so.ReadOnly = true
	sp, err := spool.Open(so)
	if err != nil {
		return loadSummary{}, err
	}
	defer sp.Close()
	ix, err := shm.New(xo)
	if err != nil {
		return loadSummary{}, err
	}
	lo.DryRun = true // a dry run changes nothing on disk
	l, err := loader.New(sp, ix, lo)
	if err != nil {
		return loadSummary{}, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cpu0, t0 := processCPU(), time.Now()
	st, err := l.Run(ctx)
	wall, cpu := time.Since(t0), processCPU()-cpu0
	if err != nil {
		return loadSummary{}, err
	}
	p := lo.Params
	sum := loadSummary{
		Entries: st.Indexed, WouldQuarantine: st.Quarantined, Files: st.Files, Existing: st.Existing,
		Full: st.Full, Errors: st.Errors, StaleTemp: st.TempRemoved, LeafDirs: st.LeafDirs,
		Iterations: st.Iterations, Sleeps: st.Sleeps, SleptSeconds: seconds(st.Slept),
		Seconds: seconds(wall), CPUSeconds: seconds(cpu), IndexHeapBytes: ix.Stats().Bytes,
	}
	if wall > 0 {
		sum.CPUShare = cpu.Seconds() / wall.Seconds()
		sum.EntriesPerSec = float64(st.Indexed) / wall.Seconds()
	}
	if !p.CPUMode() {
		sum.FormulaSeconds = float64(st.Files) / float64(p.Files) * p.Sleep.Seconds()
	}
	return sum, nil
}

// processCPU is the user + system CPU time of the whole process.
func processCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
