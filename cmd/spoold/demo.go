package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"github.com/spoold/spoold/simulate"
)

// demoOptions are the flags of `spoold demo`.
type demoOptions struct {
	dir        string
	devices    int
	interfaces int
	interval   time.Duration
	duration   time.Duration
	listen     string
}

// runDemo is `spoold demo`: a simulated fleet on 127.0.0.1 (switches with
// vendor ifIndex numbering, a few interfaces down) and the daemon polling
// it every few seconds with the if-mib profile (discovery, one RRD file
// per interface), with the admin page and its device pages, until
// interrupted or for --duration; then a flush and a one-line summary.
func runDemo(args []string, stdout, stderr io.Writer) int {
	o := demoOptions{dir: "spoold-demo", devices: 300, interfaces: 4, interval: 10 * time.Second, listen: "127.0.0.1:8780"}
	fs := pflag.NewFlagSet("spoold demo", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.dir, "dir", o.dir, "data directory (spool, RRD files, targets file); created")
	fs.IntVar(&o.devices, "devices", o.devices, "simulated devices")
	fs.IntVar(&o.interfaces, "interfaces", o.interfaces, "interfaces per device")
	fs.DurationVar(&o.interval, "poll-interval", o.interval, "poll interval (the RRD step of new files)")
	fs.DurationVar(&o.duration, "duration", 0, "stop after this long, flush, print a summary (0 = until interrupted)")
	fs.StringVar(&o.listen, "admin-listen", o.listen, "admin page address")
	if code, ok := parseCommandFlags(fs, args, stderr); !ok {
		return code
	}
	if err := demo(o, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "spoold demo:", err)
		return exitError
	}
	return exitOK
}

func demo(o demoOptions, stdout, stderr io.Writer) error {
	if err := os.MkdirAll(o.dir, 0o750); err != nil {
		return fmt.Errorf("create demo directory: %w", err)
	}
	so := simulate.DefaultOptions()
	so.Addr, so.Devices, so.Interfaces = "127.0.0.1:0", o.devices, o.interfaces
	so.Dead, so.Slow, so.Wrap, so.Restart = 0.02, 0.02, 0.05, 0.02
	// Real gear: ifIndexes 1, 2, 10101, ..., a few interfaces down, some
	// switches renumbering them when they restart.
	so.Numbering, so.Down, so.Renumber = simulate.Vendor, 0.1, 0.02
	sim, err := simulate.Listen(so, nil)
	if err != nil {
		return err
	}
	defer sim.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go sim.Serve(ctx)

	cfg, err := demoConfig(o, sim)
	if err != nil {
		return err
	}
	fs, _ := daemonFlags(&cfg)
	d, err := newDaemon(cfg, settings(fs), cfg.logger(stderr))
	if err != nil {
		return err
	}
	sig := notifySignals()
	defer signal.Stop(sig)
	if err := d.startAdmin(); err != nil {
		d.sp.Close()
		return err
	}
	d.start()
	fmt.Fprintf(stdout, "spoold demo: %d simulated devices on %s, polled every %s\n", o.devices, sim.Addr(), o.interval)
	fmt.Fprintf(stdout, "spoold demo: admin page http://%s/   (Ctrl-C to stop)\n", d.admin.Addr())
	waitCtx := context.Background()
	if o.duration > 0 {
		var stop context.CancelFunc
		waitCtx, stop = context.WithTimeout(waitCtx, o.duration)
		defer stop()
	}
	start := time.Now()
	d.waitSignals(waitCtx, sig)
	if err := d.stop(); err != nil {
		return err
	}
	printDemoSummary(stdout, d, o, time.Since(start))
	return nil
}

// demoConfig is the daemon's configuration for the demo: everything under
// o.dir, fast polls, short write delays so graphs fill quickly.
func demoConfig(o demoOptions, sim *simulate.Simulator) (config, error) {
	cfg := defaultConfig()
	cfg.spool.Dir = filepath.Join(o.dir, "spool")
	cfg.writer.Dir = filepath.Join(o.dir, "rrd")
	cfg.targetsFile = filepath.Join(o.dir, "targets.conf")
	cfg.poller.Interval = o.interval
	cfg.poller.Timeout = time.Second
	cfg.writer.WriteDelay, cfg.writer.WriteJitter = 2*o.interval, o.interval
	cfg.adminListen = o.listen
	cfg.shutdownTimeout = time.Minute
	f, err := os.Create(cfg.targetsFile)
	if err != nil {
		return cfg, fmt.Errorf("create demo targets file: %w", err)
	}
	err = sim.Fleet().WriteTargets(f, sim.Addr(), "if-mib", "", -1)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return cfg, fmt.Errorf("write demo targets file: %w", err)
	}
	return cfg, cfg.check()
}

func printDemoSummary(w io.Writer, d *daemon, o demoOptions, ran time.Duration) {
	ws, c := d.wr.Stats(), d.pl.LastCycle()
	rrds, _ := filepath.Glob(filepath.Join(d.cfg.writer.Dir, "*", "*.rrd")) // <target>/<interface>.rrd
	fmt.Fprintf(w, "demo: seconds=%.0f devices=%d cycles=%d last_cycle_ok=%d rows=%d entries_written=%d values_written=%d update_calls=%d rrd_files=%d left_in_spool=%d quarantined=%d dir=%s\n",
		ran.Seconds(), o.devices, c.Seq, c.OK, c.Rows, ws.EntriesWritten, ws.ValuesWritten, ws.UpdateCalls,
		len(rrds), d.ix.Len(), d.sp.Stats().Quarantined, o.dir)
}
