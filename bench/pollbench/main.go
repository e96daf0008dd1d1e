// Command pollbench is the poller's half of bench/poller.sh: it polls the
// targets of a targets file for some cycles into a scratch spool and prints
// one line per cycle:
//
//	poller: devices=10000 ok=10000 seconds=1.23 cpu_seconds=2.01 peak_rss_mb=80
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/spool"
)

func main() {
	os.Exit(poll(os.Args[1:]))
}

func poll(args []string) int {
	po := poller.DefaultOptions()
	var targets, spoolDir string
	cycles := 1
	fs := pflag.NewFlagSet("pollbench", pflag.ExitOnError)
	fs.StringVar(&targets, "targets", "", "targets file")
	fs.StringVar(&spoolDir, "spool-dir", "", "scratch spool directory")
	fs.IntVar(&po.Concurrency, "poll-concurrency", po.Concurrency, "polls in flight")
	fs.DurationVar(&po.Timeout, "poll-timeout", po.Timeout, "timeout")
	fs.IntVar(&po.Retries, "poll-retries", po.Retries, "retries")
	fs.IntVar(&cycles, "cycles", cycles, "cycles to run back to back")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the cycles here")
	_ = fs.Parse(args)
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	ts, err := fleet.LoadTargets(targets, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pollbench:", err)
		return 1
	}
	so := spool.DefaultOptions()
	so.PrecreateDirs = true // as the daemon does
	so.Dir = spoolDir
	sp, err := spool.Open(so)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pollbench:", err)
		return 1
	}
	defer sp.Close()
	p, err := poller.New(po, ts, sp, nil, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		fmt.Fprintln(os.Stderr, "pollbench:", err)
		return 1
	}
	for range cycles {
		cpu0 := cpuSeconds()
		st := p.Cycle(context.Background())
		fmt.Printf("poller: devices=%d ok=%d failed=%d overrun=%d values=%d seconds=%.2f cpu_seconds=%.2f peak_rss_mb=%d\n",
			st.Devices, st.OK, st.Failed, st.Overrun, st.Values, st.Duration.Seconds(), cpuSeconds()-cpu0, peakRSSMB())
		time.Sleep(time.Second) // entry names have a 1 s resolution
	}
	return 0
}

func cpuSeconds() float64 {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func peakRSSMB() int64 {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return ru.Maxrss / 1024
}
