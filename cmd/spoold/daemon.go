package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/spoold/spoold/diskstat"
	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/internal/confine"
	"github.com/spoold/spoold/loader"
	"github.com/spoold/spoold/mib"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

// daemon is one running spoold: poller → spool → index → writer, the loader
// at start-up and on rescans, and the admin server. It owns the goroutines
// of those components (started by start, ended by stop, in order).
type daemon struct {
	cfg      config
	settings map[string]string
	// log is the daemon's own lines (component=daemon); root the logger
	// each component's comes from.
	log, root *slog.Logger
	started   time.Time
	cHeap     string // the C heap's bounds (rrd.BoundCMalloc), for the start line

	sp *spool.Spool
	ix *shm.Index
	ld *loader.Loader
	wr *rrdwriter.Writer
	// native is the writer's native RRD update path (nil with
	// --rrd-native=false or --forward): its kept headers are dropped last.
	native *rrdwriter.NativeRRD
	pl     *poller.Poller
	proto  protocol // the rrdcached protocol (rrdcached.go)
	fleet  fleet.Current
	admin  adminServer
	disk   *diskstat.Load
	live   liveness // for the systemd watchdog (notify.go)
	// landlock is the daemon's confinement (confine.go): off until
	// serve applies it, while the admin server may read it.
	landlock atomic.Pointer[confine.Status]

	// reg is the registry /metrics serves (nil without the admin server).
	reg *prometheus.Registry

	// flushCtx is the context of flushes the daemon starts on its own
	// (SIGUSR1); the stop cancels it after the shutdown flush.
	flushCtx    context.Context
	flushCancel context.CancelFunc

	pollCancel, loadCancel, writeCancel, diskCancel context.CancelFunc
	pollDone, loadDone, writeDone, diskDone         chan struct{}
	stopOnce                                        sync.Once

	// loadFleet reads the targets and profiles files, at start and on
	// SIGHUP (tests replace it).
	loadFleet func() (*fleet.Generation, error)
	// mibs is what the loads of --mib-dir keep: their counts, and the
	// last load, which a SIGHUP with every MIB file unchanged reuses.
	mibs *mib.LoadCache
	// reloadSince is when the running reload started, Unix nanoseconds;
	// 0 when none runs. reloadWarn is how long a reload runs before it
	// is logged as stuck, and again each time as long (0: reloadSlow).
	reloadSince atomic.Int64
	reloadWarn  time.Duration
}

// component returns the logger of the daemon's component name.
func (d *daemon) component(name string) *slog.Logger {
	return d.root.With("component", name)
}

// adminServer is what the daemon needs of the admin HTTP server.
type adminServer interface {
	Addr() string
	Shutdown(ctx context.Context) error
}

// newDaemon opens the spool (taking its lock) and builds every component;
// nothing runs yet.
func newDaemon(cfg config, settings map[string]string, log *slog.Logger) (*daemon, error) {
	d := &daemon{cfg: cfg, settings: settings, root: log, log: log.With("component", "daemon"), started: time.Now()}
	off := confine.Probe(false)
	d.landlock.Store(&off)
	d.flushCtx, d.flushCancel = context.WithCancel(context.Background())
	d.mibs = mib.NewLoadCache(nil) // registered with /metrics' registry
	d.loadFleet = func() (*fleet.Generation, error) { return fleet.Load(cfg.fleetFiles(), d.mibs) }
	f, err := preflight(cfg, d.mibs)
	if err != nil {
		return nil, err
	}
	d.fleet.Set(f)
	cfg.spool.Logger = log.With("component", "spool")
	if d.sp, err = spool.Open(cfg.spool); err != nil {
		return nil, err
	}
	if err := d.build(cfg, f); err != nil {
		d.sp.Close()
		return nil, err
	}
	return d, nil
}

func (d *daemon) build(cfg config, f *fleet.Generation) error {
	var err error
	cfg.index.MinDelay = cfg.writer.WriteDelay // the writer's due times (shm.Options.MinDelay)
	if d.ix, err = shm.New(cfg.index); err != nil {
		return err
	}
	lo := cfg.loader
	lo.Logger = d.component("loader")
	if d.ld, err = loader.New(d.sp, d.ix, lo); err != nil {
		return err
	}
	d.disk = diskstat.NewLoad(cfg.diskStatsInterval)
	wo := cfg.writer
	wo.Layout, wo.Logger, wo.Ready = d.fleet.Layout, d.component("writer"), d.ld
	wo.OnTick = d.live.writerWoke
	if wo.RRD, d.native, err = writerRRD(wo, &d.disk.Updates); err != nil {
		return err
	}
	if d.wr, err = rrdwriter.New(d.sp, d.ix, wo); err != nil {
		return err
	}
	if d.proto.backend, err = d.newProtocolBackend(wo); err != nil {
		return err
	}
	d.disk.Resolve(cfg.spool.Dir, cfg.writer.Dir)
	po := cfg.poller
	onCycle := po.OnCycle
	po.OnCycle = func(st poller.CycleStats) {
		d.disk.Cycles.CloseUnit(time.Now())
		d.live.pollerCycle()
		if onCycle != nil {
			onCycle(st)
		}
	}
	d.pl, err = poller.New(po, f.Targets, meteredSpool{d.sp, &d.disk.Cycles}, d.ix, d.component("poller"))
	d.logMIBErrors(f)
	return err
}

// logMIBErrors logs what of --mib-dir did not load; the names of the rest
// resolve, and a profile using a missing one failed to load already.
func (d *daemon) logMIBErrors(f *fleet.Generation) {
	if f.MIBErr != nil {
		d.log.Error("some MIB files did not load; the others are in use", "err", f.MIBErr)
	}
}

// start takes the disk sampler's baseline, logs the started line, then
// runs the sampler, the writer, the loader (start-up walk, then rescans)
// and the poller, each in its own goroutine. The line comes first so that
// it precedes everything they log (a first poll cycle can take 50 µs).
func (d *daemon) start() {
	d.disk.Sample()
	d.log.Info("spoold started", "version", versionString(), "targets", len(d.fleet.Get().Targets),
		"spool", d.cfg.spool.Dir, "rrd_dir", d.cfg.writer.Dir, "pid", os.Getpid(), "gomaxprocs", runtime.GOMAXPROCS(0),
		"gogc", gcPercentInForce(), "c_heap", d.cHeap, "landlock", d.landlock.Load().String())
	if poller.GoSNMPLogging {
		d.log.Warn("spoold was built without the build tag gosnmp_nodebug: gosnmp prepares a debug log line for every variable it decodes, about 2.6 times the allocations of a poll; build with make, which sets it (scripts/gotags)")
	}
	d.diskCancel, d.diskDone = d.goRun("disk sampler", d.disk.Run)
	d.writeCancel, d.writeDone = d.goRun("writer", d.wr.Run)
	d.loadCancel, d.loadDone = d.goRun("loader", func(ctx context.Context) error { return d.ld.Rescans(ctx, d.ix) })
	d.pollCancel, d.pollDone = d.goRun("poller", d.pl.Run)
}

func (d *daemon) goRun(name string, run func(context.Context) error) (context.CancelFunc, chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			d.log.Error(name+" stopped", "err", err)
		}
	}()
	return cancel, done
}

// flushGrace is how long the stop waits, after the admin server's
// shutdown, for a flush still writing its current file.
const flushGrace = 30 * time.Second

// stop ends everything in order: polling, the loader, the writer's loop,
// then a flush of everything pending within the shutdown timeout (what is
// not flushed stays in the spool), the admin server, and the spool lock.
// It is safe to call twice.
func (d *daemon) stop() error {
	var err error
	d.stopOnce.Do(func() { err = d.stopOrdered() })
	return err
}

func (d *daemon) stopOrdered() error {
	d.log.Info("stopping: polling")
	d.pollCancel()
	<-d.pollDone
	d.log.Info("stopping: rrdcached protocol")
	d.stopProtocol()
	ctx, cancel := context.WithTimeout(context.Background(), d.cfg.shutdownTimeout)
	defer cancel()
	d.finishWalk()
	d.loadCancel()
	<-d.loadDone
	d.writeCancel()
	<-d.writeDone
	d.diskCancel()
	<-d.diskDone
	d.flushAtShutdown(ctx)
	d.flushCancel() // a SIGUSR1 flush still going stops at its next file
	if d.admin != nil {
		if err := d.admin.Shutdown(ctx); err != nil {
			d.log.Warn("stop admin server", "err", err)
		}
	}
	if err := d.wr.Close(); err != nil {
		d.log.Warn("close the connection to the forward peer", "err", err)
	}
	ws := d.wr.Stats()
	d.log.Info("spoold stopped", "entries_left", d.ix.Len(), "values_written", ws.ValuesWritten, "update_calls", ws.UpdateCalls)
	// No flush may run on a closed spool: wait for a SIGUSR1 or POST
	// /flush still writing (each stops at its next file once its context
	// ends); if one outlives the timeout, the exit ends it, as a crash
	// would, which loses nothing.
	wait, cancelWait := context.WithTimeout(context.Background(), flushGrace)
	defer cancelWait()
	if err := d.wr.WaitFlushes(wait); err != nil {
		return fmt.Errorf("stop: a flush still runs, the spool is left to the exit: %w", err)
	}
	if d.native != nil {
		if err := d.native.Close(); err != nil {
			d.log.Warn("drop the native update path's RRD headers", "err", err)
		}
	}
	return d.sp.Close()
}

// finishWalk ends the throttle of a start-up walk still going, so that
// the rest of the spool is indexed at full speed for the shutdown flush.
func (d *daemon) finishWalk() {
	if d.ld.WalkedAll() {
		return
	}
	p := d.ld.Params()
	p.Sleep, p.CPU = 0, 0
	if err := d.ld.SetParams(p); err != nil {
		d.log.Warn("unthrottle the loader for the shutdown", "err", err)
	}
	d.log.Info("stopping: finishing the start-up walk of the spool, unthrottled")
}

// flushAtShutdown writes everything pending. The writer first walks what
// the start-up walk has not reached (every key must be complete in the
// index before it is written); what the timeout leaves stays in the spool
// for the next start.
func (d *daemon) flushAtShutdown(ctx context.Context) {
	d.log.Info("stopping: flushing pending values", "segments", d.ix.Len(), "timeout", d.cfg.shutdownTimeout)
	if err := d.wr.FlushAll(ctx); err != nil {
		d.log.Warn("flush at shutdown incomplete; the rest stays in the spool", "err", err, "segments_left", d.ix.Len())
	}
	d.logOrphans()
}

// logOrphans warns of keys whose entries a flush left in the spool because
// they have no profile and no RRD file (shown in /status too).
func (d *daemon) logOrphans() {
	if o := rrdwriter.Orphans(d.wr.TargetErrors()); len(o) > 0 {
		d.log.Warn("entries of keys with no profile and no RRD file stay in the spool", "orphans", len(o), "keys", o[:min(len(o), 20)])
	}
}

// reload re-reads the targets and profiles files (SIGHUP). On an error the
// running fleet stays; nothing pending is touched either way.
func (d *daemon) reload() {
	f, err := d.loadFleet()
	if err == nil {
		err = d.pl.SetTargets(f.Targets)
	}
	if err != nil {
		d.log.Error("reload: keeping the running targets", "err", err)
		return
	}
	d.fleet.Set(f)
	d.logMIBErrors(f)
	d.log.Info("reloaded targets and profiles", "targets", len(f.Targets))
}

// flushAll writes everything pending now (SIGUSR1, POST /flush).
func (d *daemon) flushAll(ctx context.Context) error {
	n := d.ix.Len()
	err := d.wr.FlushAll(ctx)
	if err != nil {
		d.log.Warn("flush incomplete", "entries_before", n, "entries_after", d.ix.Len(), "err", err)
	} else {
		d.log.Info("flushed", "entries_before", n, "entries_after", d.ix.Len())
	}
	d.logOrphans()
	return err
}

// runDaemon is `spoold [flags]`: it parses flags, runs until SIGTERM or
// SIGINT, and returns the exit code.
func runDaemon(args []string, stdout, stderr io.Writer) int {
	cfg := defaultConfig()
	fs, groups := daemonFlags(&cfg)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // printed below, once, on --help
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			printDaemonUsage(stdout, groups)
			return exitOK
		}
		fmt.Fprintln(stderr, "spoold:", err)
		return exitUsage
	}
	if cfg.showVersion {
		fmt.Fprintln(stdout, "spoold", versionString())
		return exitOK
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "spoold: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	cfg.protocolOnly(fs.Changed("targets"))
	if err := cfg.check(); err != nil {
		fmt.Fprintln(stderr, "spoold:", err)
		return exitUsage
	}
	if cfg.checkOnly {
		return checkConfig(cfg, fs, stdout, stderr)
	}
	return serve(cfg, settings(fs), cfg.logger(stderr))
}

// preflight is what the daemon checks at start besides the flags (which
// config.check did), and all that `spoold -t` checks: the targets and
// profiles files parse, and files can be created in --rrd-dir. It returns
// the fleet of the files.
func preflight(cfg config, m *mib.LoadCache) (*fleet.Generation, error) {
	f, err := fleet.Load(cfg.fleetFiles(), m)
	if err != nil {
		return nil, err
	}
	if f.MIBErr != nil && cfg.checkOnly {
		return nil, fmt.Errorf("check --mib-dir: %w", f.MIBErr)
	}
	if err := rrdwriter.CheckDir(cfg.writer.Dir); err != nil {
		return nil, fmt.Errorf("check --rrd-dir: %w", err)
	}
	return f, nil
}

// checkConfig is `spoold -t`: the flags were checked as the daemon checks
// them; preflight as at the daemon's start; settings printed.
func checkConfig(cfg config, fs *pflag.FlagSet, stdout, stderr io.Writer) int {
	f, err := preflight(cfg, nil)
	if err != nil {
		fmt.Fprintln(stderr, "spoold: configuration test failed:", err)
		return exitError
	}
	printSettings(stdout, settings(fs))
	fmt.Fprintf(stdout, "spoold: configuration ok: %d targets\n", len(f.Targets))
	return exitOK
}

// fileUmask is or-ed into the process umask before anything is created:
// librrd creates RRD files 0644 and the writer creates --rrd-dir 0755; the
// spool and RRD data are nobody else's business, so files end up at most
// 0640 and directories 0750 whatever umask spoold was started with.
const fileUmask = 0o027

func serve(cfg config, settings map[string]string, root *slog.Logger) int {
	syscall.Umask(syscall.Umask(fileUmask) | fileUmask)
	runtime.GOMAXPROCS(cfg.procs(os.Getenv("GOMAXPROCS") != "", runtime.GOMAXPROCS(0)))
	if pct, ok := cfg.gcTarget(); ok {
		debug.SetGCPercent(pct)
	}
	log := root.With("component", "daemon")
	cHeap, err := rrd.BoundCMalloc()
	if err != nil {
		log.Warn("start spoold: the C heap keeps glibc's malloc parameters", "err", err)
	}
	d, err := newDaemon(cfg, settings, root)
	if err != nil {
		log.Error("start spoold", "err", err)
		return exitError
	}
	d.cHeap = cHeap
	sig := notifySignals() // before the admin URL is logged: a signal sent from then on is handled
	defer signal.Stop(sig)
	if err := d.startAdmin(); err != nil {
		log.Error("start admin server", "err", err)
		d.sp.Close()
		return exitError
	}
	if err := d.startProtocol(d.reg); err != nil {
		log.Error("start spoold", "err", err)
		d.abortStart()
		return exitError
	}
	// The pid file last: a start that fails leaves the file of a spoold
	// already running alone.
	if cfg.pidFile != "" {
		pf, err := writePidFile(cfg.pidFile)
		if err != nil {
			log.Error("start spoold", "err", err)
			d.abortStart()
			return exitError
		}
		defer func() {
			if err := pf.remove(); err != nil {
				log.Warn("stop spoold", "err", err)
			}
		}()
	}
	if err := d.confine(); err != nil {
		log.Error("start spoold", "err", err)
		d.abortStart()
		return exitError
	}
	d.start()
	n := d.notifyReady() // systemd: READY=1, the watchdog
	d.waitSignals(context.Background(), sig)
	n.stopping()
	if err := d.stop(); err != nil {
		log.Error("stop spoold", "err", err)
		return exitError
	}
	return exitOK
}

// procs is the GOMAXPROCS of --gomaxprocs, given the value in force
// (the CPUs the process may use, or the GOMAXPROCS environment variable's
// value when env): 0 keeps the environment's value, or else is the CPUs
// plus a P for each writer (rrdwriter.Options.Procs).
func (c config) procs(env bool, inForce int) int {
	switch {
	case c.gomaxprocs > 0:
		return c.gomaxprocs
	case env:
		return inForce
	}
	return c.writer.Procs(inForce)
}

// gcTarget is the GOGC of --gc-percent, and whether to set it: 0 keeps
// the runtime's (Go's 100, or the GOGC environment variable's).
func (c config) gcTarget() (int, bool) { return c.gcPercent, c.gcPercent > 0 }

// gcPercentInForce is the collector's GOGC now (-1: off).
func gcPercentInForce() int64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return -1
	}
	return int64(s[0].Value.Uint64())
}

// abortStart undoes a start that failed after the admin server started.
func (d *daemon) abortStart() {
	d.stopProtocol()
	if d.admin != nil {
		ctx, cancel := context.WithTimeout(context.Background(), d.cfg.shutdownTimeout)
		defer cancel()
		if err := d.admin.Shutdown(ctx); err != nil {
			d.log.Warn("stop admin server", "err", err)
		}
	}
	d.sp.Close()
}

// notifySignals starts catching the daemon's signals; the caller stops
// with signal.Stop.
func notifySignals() chan os.Signal {
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1)
	return sig
}

// waitSignals handles SIGHUP (reload) and SIGUSR1 (flush) from sig until
// SIGTERM, SIGINT or the end of ctx. Reloads run in a goroutine of their
// own (reloadLoop), one at a time, so a slow file never delays SIGTERM; a
// reload still running when waitSignals returns is left to finish.
func (d *daemon) waitSignals(ctx context.Context, sig <-chan os.Signal) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	reloads := make(chan struct{}, 1)
	go d.reloadLoop(ctx, reloads)
	for {
		var s os.Signal
		select {
		case <-ctx.Done():
			return
		case s = <-sig:
		}
		switch s {
		case syscall.SIGHUP:
			if since := d.reloadSince.Load(); since != 0 {
				d.log.Warn("SIGHUP while a reload still runs: the files are read again when it ends", "running_for", time.Since(time.Unix(0, since)).Round(time.Millisecond))
			}
			select {
			case reloads <- struct{}{}:
			default: // one is already asked for: it reads the files after this signal
			}
		case syscall.SIGUSR1:
			go d.flushAll(d.flushCtx)
		default:
			d.log.Info("signal received, shutting down", "signal", s.String())
			return
		}
	}
}

// reloadSlow is how long a reload runs before it is logged as stuck: the
// files it reads are bounded and never block (fileutil.ReadRegular), so
// only a hung file system or a parse of very many MIB files takes that
// long.
const reloadSlow = 30 * time.Second

// reloadLoop runs a reload for each request until ctx ends. Requests made
// while a reload runs are one more reload after it: the files may have
// changed again.
func (d *daemon) reloadLoop(ctx context.Context, reloads <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-reloads:
			d.watchReload(ctx)
			if ctx.Err() != nil { // the reload may still run: never start another beside it
				return
			}
		}
	}
}

// watchReload runs one reload, logging it each reloadWarn while it runs,
// so that a stuck one, and the SIGHUPs waiting behind it, are seen. It
// returns when the reload ends, or when ctx ends (the reload is left to
// finish).
func (d *daemon) watchReload(ctx context.Context) {
	start := time.Now()
	d.reloadSince.Store(start.UnixNano())
	defer d.reloadSince.Store(0)
	done := make(chan struct{})
	go func() { defer close(done); d.reload() }()
	every := d.reloadWarn
	if every <= 0 {
		every = reloadSlow
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
			d.log.Error("reload still running: reading the targets, profiles or MIB files does not finish; SIGHUPs sent meanwhile are applied after it", "running_for", time.Since(start).Round(time.Second))
		}
	}
}
