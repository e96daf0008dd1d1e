// Command tablebench is the tables half of bench/poller.sh: it
// discovers and polls the targets of a targets file (a simulated fleet with
// the if-mib profile) into a scratch spool, then polls the first
// --write-devices of them into a second spool and creates and writes their
// interface RRD files with librrd, and prints:
//
//	tables: devices=<n> interfaces=<n> discovery_s=<s> cycle_s=<s> write_s=<s> pdus_per_device=<n>
//	tables-disk: files=<n> bytes=<n> bytes_per_file=<n>
//
// discovery_s is one discovery of every device (Poller.Discover); cycle_s
// the second of two cycles after it (the steady state: the first creates
// the spool's segments); pdus_per_device the SNMP requests of that cycle
// per answered device; write_s one cycle's files created and written
// (Writer.FlushAll after one poll of the write devices).
package main

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

func main() { os.Exit(run(os.Args[1:])) }

// profile is where to write a CPU profile of the steady cycle ("": none).
var profile string

// writers is the writer's Options.Writers.
var writers = rrdwriter.DefaultOptions().Writers

func cpuSeconds() float64 {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func run(args []string) int {
	po := poller.DefaultOptions()
	var targets, spoolDir, rrdDir string
	writeDevices := 250
	fl := pflag.NewFlagSet("tablebench", pflag.ExitOnError)
	fl.StringVar(&targets, "targets", "", "targets file")
	fl.StringVar(&spoolDir, "spool-dir", "", "scratch directory of the spools")
	fl.StringVar(&rrdDir, "rrd-dir", "", "scratch directory of the RRD files")
	fl.IntVar(&writeDevices, "write-devices", writeDevices, "devices whose files are created and written")
	fl.IntVar(&po.Concurrency, "poll-concurrency", po.Concurrency, "polls in flight")
	fl.IntVar(&po.DiscoveryConcurrency, "discovery-concurrency", po.DiscoveryConcurrency, "discoveries in flight")
	fl.Var(&modeValue{&po.TableMode}, "poll-table-mode", "auto, get or bulk")
	cpuProfile := fl.String("cpuprofile", "", "write a CPU profile of the steady cycle here")
	fl.IntVar(&writers, "writers", writers, "RRD files written in parallel (rrdwriter.Options.Writers)")
	_ = fl.Parse(args)
	profile = *cpuProfile
	if err := bench(po, targets, spoolDir, rrdDir, writeDevices); err != nil {
		fmt.Fprintln(os.Stderr, "tablebench:", err)
		return 1
	}
	return 0
}

type modeValue struct{ p *poller.TableMode }

func (v *modeValue) String() string { return string(*v.p) }
func (v *modeValue) Type() string   { return "mode" }
func (v *modeValue) Set(s string) (err error) {
	*v.p, err = poller.ParseTableMode(s)
	return err
}

func bench(po poller.Options, targetsFile, spoolDir, rrdDir string, writeDevices int) error {
	ts, err := fleet.LoadTargets(targetsFile, nil)
	if err != nil {
		return err
	}
	r, err := newRig(po, ts, filepath.Join(spoolDir, "poll"))
	if err != nil {
		return err
	}
	defer r.sp.Close()
	p := r.p
	start := time.Now()
	if ok, failed := p.Discover(context.Background(), true); failed > 0 || ok != len(ts) {
		return fmt.Errorf("discovery: %d ok, %d failed of %d", ok, failed, len(ts))
	}
	discovery := time.Since(start)
	var st poller.CycleStats
	var cpu float64
	for i := range 2 {
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second))) // one entry per key and second
		if i == 1 && profile != "" {
			if f, err := os.Create(profile); err == nil && pprof.StartCPUProfile(f) == nil {
				defer pprof.StopCPUProfile()
			}
		}
		cpu0 := cpuSeconds()
		st = p.Cycle(context.Background())
		cpu = cpuSeconds() - cpu0
		if st.OK != len(ts) {
			return fmt.Errorf("cycle: %+v", st)
		}
	}
	write, err := writeFiles(po, ts[:min(writeDevices, len(ts))], filepath.Join(spoolDir, "write"), rrdDir)
	if err != nil {
		return err
	}
	fmt.Printf("tables: devices=%d interfaces=%d discovery_s=%.2f cycle_s=%.2f write_s=%.2f pdus_per_device=%.1f\n",
		len(ts), st.Rows, discovery.Seconds(), st.Duration.Seconds(), write.Seconds(), float64(st.Requests)/float64(st.OK))
	fmt.Printf("tables-cpu: cycle_cpu_s=%.2f (this process; the simulator's is apart)\n", cpu)
	return diskUse(rrdDir)
}

// rig is a poller of some targets into its own spool and index.
type rig struct {
	p  *poller.Poller
	sp *spool.Spool
	ix *shm.Index
}

func newRig(po poller.Options, ts []*fleet.Target, dir string) (*rig, error) {
	so := spool.DefaultOptions()
	so.PrecreateDirs, so.Dir = true, dir
	sp, err := spool.Open(so)
	if err != nil {
		return nil, err
	}
	r := &rig{sp: sp}
	if r.ix, err = shm.New(shm.DefaultOptions()); err == nil {
		r.p, err = poller.New(po, ts, sp, r.ix, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	}
	if err != nil {
		sp.Close()
		return nil, err
	}
	return r, nil
}

// writeFiles polls ts once (discovering them first) and times the writer's
// creation and update of every file of that cycle.
func writeFiles(po poller.Options, ts []*fleet.Target, spoolDir, rrdDir string) (time.Duration, error) {
	r, err := newRig(po, ts, spoolDir)
	if err != nil {
		return 0, err
	}
	defer r.sp.Close()
	if st := r.p.Cycle(context.Background()); st.OK != len(ts) {
		return 0, fmt.Errorf("write cycle: %+v", st)
	}
	byName := map[string]*fleet.Target{}
	for _, t := range ts {
		byName[t.Name] = t
	}
	wo := rrdwriter.DefaultOptions()
	wo.Dir, wo.WriteDelay, wo.WriteJitter, wo.Writers = rrdDir, 0, 0, writers
	wo.Layout = func(key string) (rrd.Layout, bool) {
		name, _ := fleet.SplitKey(key)
		if t := byName[name]; t != nil {
			return t.RRDLayout(key, po.Interval)
		}
		return rrd.Layout{}, false
	}
	w, err := rrdwriter.New(r.sp, r.ix, wo)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := w.FlushAll(context.Background()); err != nil {
		return 0, err
	}
	took := time.Since(start)
	if s := w.Stats(); s.EntriesPending != 0 {
		return 0, fmt.Errorf("writer left %d entries pending", s.EntriesPending)
	}
	return took, nil
}

// diskUse prints the RRD files' count and the disk blocks they take.
func diskUse(dir string) error {
	var files, bytes int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".rrd" {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files++
		bytes += diskBytes(info)
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Printf("tables-disk: files=%d bytes=%d bytes_per_file=%d\n", files, bytes, bytes/max(files, 1))
	return nil
}
