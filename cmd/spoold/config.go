package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"sort"
	"time"

	"github.com/spf13/pflag"

	"github.com/spoold/spoold/admin"
	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/graph"
	"github.com/spoold/spoold/internal/fileutil"
	"github.com/spoold/spoold/loader"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

// config is everything the daemon's flags set. Each package's part is its
// own Options; the rest is the daemon's.
type config struct {
	spool  spool.Options
	index  shm.Options
	loader loader.Options
	writer rrdwriter.Options
	poller poller.Options
	// protocol is the rrdcached protocol's server (rrdcached.go).
	protocol protocolConfig

	targetsFile  string
	profilesFile string
	mibDirs      []string

	diskStatsInterval time.Duration

	adminListen     string
	adminToken      string
	adminCache      time.Duration
	adminPprof      bool
	graphMaxDS      int
	shutdownTimeout time.Duration
	pidFile         string
	landlock        bool
	gomaxprocs      int
	gcPercent       int
	logFormat       string
	logLevel        string

	checkOnly   bool
	showVersion bool
}

// defaultConfig is sane for about 2,500 devices polled every 5 minutes.
func defaultConfig() config {
	c := config{
		spool: spool.DefaultOptions(), index: shm.DefaultOptions(), loader: loader.DefaultOptions(),
		writer: rrdwriter.DefaultOptions(), poller: poller.DefaultOptions(), protocol: defaultProtocolConfig(),
		targetsFile: "/etc/spoold/targets.conf", diskStatsInterval: 10 * time.Second,
		adminListen: "127.0.0.1:8780", adminCache: 250 * time.Millisecond, graphMaxDS: graph.DefaultMaxDS, shutdownTimeout: 2 * time.Minute,
		logFormat: "text", logLevel: "info", landlock: true,
	}
	c.spool.Dir = "/var/spool/spoold"
	c.spool.PrecreateDirs = true
	c.spool.SegmentOpenFiles = defaultSegmentOpenFiles()
	c.writer.Dir = "/var/lib/spoold/rrd"
	return c
}

// flagGroup is a titled set of flags for --help.
type flagGroup struct {
	title string
	fs    *pflag.FlagSet
}

// daemonFlags registers every daemon flag on one set and returns the groups
// for --help.
func daemonFlags(c *config) (*pflag.FlagSet, []flagGroup) {
	group := func(title string) flagGroup {
		return flagGroup{title, pflag.NewFlagSet(title, pflag.ContinueOnError)}
	}
	g := []flagGroup{group("Polling"), group("Spool and index"), group("Loader"), group("RRD writer"), group("Admin and process")}

	fs := g[0].fs
	fs.StringVar(&c.targetsFile, "targets", c.targetsFile, "targets file (docs/configuration.md); reloaded on SIGHUP; none with --listen when it is empty, or not given and the default absent")
	fs.StringVar(&c.profilesFile, "profiles", c.profilesFile, "profiles file; empty = built-in profiles only; reloaded on SIGHUP")
	fs.DurationVar(&c.poller.Interval, "poll-interval", c.poller.Interval, "time between poll cycle starts; also the RRD step of new files")
	fs.IntVar(&c.poller.Concurrency, "poll-concurrency", c.poller.Concurrency, "most SNMP polls in flight (one UDP socket each); fewer, down to 8 a CPU, while the CPUs have no idle time and the cycle would still end in a third of its deadline")
	fs.DurationVar(&c.poller.Timeout, "poll-timeout", c.poller.Timeout, "wait for one SNMP response; a target's timeout= overrides it")
	fs.IntVar(&c.poller.Retries, "poll-retries", c.poller.Retries, "resends after a timeout; a target's retries= overrides it")
	fs.DurationVar(&c.poller.CycleTimeout, "poll-cycle-timeout", c.poller.CycleTimeout, "end a cycle after this long (0 = 90% of --poll-interval)")
	fs.IntVar(&c.poller.MaxVarbinds, "poll-max-varbinds", c.poller.MaxVarbinds, "most OIDs in one SNMP Get")
	addShardFlags(fs, &c.poller)
	addTableFlags(fs, c)

	addSpoolFlags(g[1].fs, &c.spool)
	addIndexFlags(g[1].fs, &c.index)

	addLoaderFlags(g[2].fs, &c.loader.Params)
	g[2].fs.DurationVar(&c.loader.RescanInterval, "rescan-interval", c.loader.RescanInterval, "walk the spool again this long after a walk ended, for entries other processes dropped in or a full index left on disk (0 = never)")

	fs = g[3].fs
	fs.StringVar(&c.writer.Dir, "rrd-dir", c.writer.Dir, "directory of the RRD files")
	fs.DurationVar(&c.writer.WriteDelay, "write-delay", c.writer.WriteDelay, "rrdcached -w: how long after its oldest pending poll a target's file is written (a backlog found at start is due at once)")
	fs.DurationVar(&c.writer.WriteJitter, "write-jitter", c.writer.WriteJitter, "rrdcached -z: random extra delay per file, to spread writes")
	fs.IntVar(&c.writer.Writers, "writers", c.writer.Writers, "RRD files written in parallel")
	fs.Var(&rrdSyncValue{&c.writer.RRDFsync}, "rrd-fsync", "durability of RRD updates before their spool entries are removed: none (kernel writeback), batch (one syncfs for the files updated meanwhile), always (fdatasync each file)")
	fs.DurationVar(&c.writer.FutureTolerance, "future-tolerance", c.writer.FutureTolerance, "quarantine, never write, a spooled value dated further ahead of the clock than this (written, it would hide every real poll before its date)")
	fs.BoolVar(&c.writer.Prefetch, "write-prefetch", c.writer.Prefetch, "ask the kernel for every page an RRD update will touch at once, before the update")
	fs.BoolVar(&c.writer.Native, "rrd-native", c.writer.Native, "update RRD files in Go, writing the bytes librrd 1.7 writes (librrd for the files and values it does not handle); false = every update through librrd")
	fs.IntVar(&c.writer.OpenFiles, "rrd-open-files", c.writer.OpenFiles, "most RRD files whose parsed headers the native update path keeps between updates (each update opens its file for the update only)")
	fs.Float64Var(&c.writer.WriteRate, "write-rate", c.writer.WriteRate, "most RRD files written per second (0 = no cap); graphs and shutdown bypass it")
	fs.DurationVar(&c.writer.BackoffMin, "write-backoff-min", c.writer.BackoffMin, "first wait before retrying an RRD file whose write failed (full disk, read-only, permissions); doubles per failure")
	fs.DurationVar(&c.writer.BackoffMax, "write-backoff-max", c.writer.BackoffMax, "longest wait before retrying an RRD file whose write failed")
	addForwardFlags(fs, &c.writer)

	fs = g[4].fs
	fs.StringVar(&c.adminListen, "admin-listen", c.adminListen, "address of the admin HTTP server (status, metrics, graphs); empty = off")
	fs.StringVar(&c.adminToken, "admin-token", c.adminToken, "bearer token required by POST /flush and POST /loader (empty = none)")
	fs.IntVar(&c.graphMaxDS, "graph-max-ds", c.graphMaxDS, "most data sources one graph draws; a request naming more is refused, one naming none draws the first ones")
	fs.DurationVar(&c.adminCache, "admin-status-cache", c.adminCache, "serve a rendered /status or /metrics again for this long, so many clients cost one rendering (0 = render every request)")
	fs.BoolVar(&c.adminPprof, "admin-pprof", c.adminPprof, "serve Go's runtime profiles (heap, CPU, goroutines) under /debug/pprof/ on the admin server, behind --admin-token when set")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", c.shutdownTimeout, "on SIGTERM, how long to flush pending values into RRD files; the rest stays in the spool")
	fs.DurationVar(&c.diskStatsInterval, "disk-stats-interval", c.diskStatsInterval, "sample the disks behind --spool-dir and --rrd-dir (iostat -x figures) and spoold's own I/O this often, for /status, /metrics and the page")
	fs.StringVar(&c.pidFile, "pid-file", c.pidFile, "write the process id to this file")
	fs.BoolVar(&c.landlock, "landlock", c.landlock, "restrict the daemon's own file access with Landlock, once started, to the spool, --rrd-dir, the configuration files' directories, --mib-dir and the system files librrd reads (kernels without Landlock: not restricted, logged)")
	fs.IntVar(&c.gomaxprocs, "gomaxprocs", c.gomaxprocs, "most goroutines running Go code at once (GOMAXPROCS); 0 = the CPUs the process may use plus --writers, as a writer waiting for the disk holds one (the GOMAXPROCS environment variable, when set, is kept)")
	fs.IntVar(&c.gcPercent, "gc-percent", c.gcPercent, "the garbage collector's GOGC: heap growth over the live heap, in percent, before the next collection; lower takes less memory for more CPU; 0 = the runtime's (100, or the GOGC environment variable when set)")
	fs.StringVar(&c.logFormat, "log-format", c.logFormat, "log format: text or json")
	fs.StringVar(&c.logLevel, "log-level", c.logLevel, "log level: debug, info, warn or error")
	fs.BoolVarP(&c.checkOnly, "test", "t", false, "check flags, targets and profiles, print the effective settings, and exit")
	fs.BoolVar(&c.showVersion, "version", false, "print the version and exit")

	g = append(g, group("rrdcached protocol"))
	addProtocolFlags(g[len(g)-1].fs, &c.protocol)

	all := pflag.NewFlagSet("spoold", pflag.ContinueOnError)
	for _, grp := range g {
		all.AddFlagSet(grp.fs)
	}
	return all, g
}

func printDaemonUsage(w io.Writer, groups []flagGroup) {
	fmt.Fprint(w, "usage: spoold [flags]          run the daemon\n       spoold <command> [flags]  see 'spoold help'\n")
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n%s", g.title, g.fs.FlagUsages())
	}
}

// minKeysZone is the smallest --keys-zone: room for a few keys of the
// longest target name and their entries (shm charges about 128 bytes a
// key plus its name, and 8 bytes an entry). A 1-byte index took nothing.
const minKeysZone = 1 << 10

// fleetFiles are the configuration files a fleet generation loads, and
// the poll interval its RRD layouts take as their step.
func (c *config) fleetFiles() fleet.Files {
	return fleet.Files{Targets: c.targetsFile, Profiles: c.profilesFile, MIBDirs: c.mibDirs, Step: c.poller.Interval}
}

// check validates the whole configuration, for the daemon and for -t
// alike: first the daemon's own settings and the ranges its flags narrow,
// then each package's options built from the flags (what New would
// refuse), the field a package names given as its flag (fieldFlags).
func (c *config) check() error {
	if err := c.checkDaemonFlags(); err != nil {
		return err
	}
	for _, p := range c.optionParts() {
		if err := p.validate(); err != nil {
			return flagError(p.name, err)
		}
	}
	if err := c.checkDirsApart(); err != nil {
		return err
	}
	if c.adminListen != "" {
		if err := admin.CheckListen(c.adminListen); err != nil {
			return fmt.Errorf("check --admin-listen: %w", err)
		}
	}
	return nil
}

// checkDaemonFlags checks the flags of the daemon's own settings, and the
// ranges it narrows beyond a package's (docs/configuration.md).
func (c *config) checkDaemonFlags() error {
	checks := []struct {
		bad  bool
		flag string
		msg  string
	}{
		{c.targetsFile == "" && len(c.protocol.server.Listeners) == 0, "targets", "must not be empty without --listen"},
		// The poll interval is the step of new RRD files, whole seconds.
		{c.poller.Interval < time.Second, "poll-interval", "must be at least 1s"},
		{c.index.MaxBytes < minKeysZone, "keys-zone", "must be at least 1k"},
		{c.shutdownTimeout <= 0, "shutdown-timeout", "must be positive"},
		{c.diskStatsInterval < 100*time.Millisecond, "disk-stats-interval", "must be at least 100ms"},
		{c.adminCache < 0, "admin-status-cache", "must be >= 0"},
		{c.gomaxprocs < 0, "gomaxprocs", "must be >= 0"},
		{c.gcPercent < 0, "gc-percent", "must be >= 0"},
		{c.graphMaxDS < 1 || c.graphMaxDS > admin.MaxGraphDS, "graph-max-ds", fmt.Sprintf("must be from 1 to %d", admin.MaxGraphDS)},
		{c.logFormat != "text" && c.logFormat != "json", "log-format", "must be text or json"},
		{parseLevel(c.logLevel) == nil, "log-level", "must be debug, info, warn or error"},
	}
	for _, k := range checks {
		if k.bad {
			return fmt.Errorf("check --%s: %s", k.flag, k.msg)
		}
	}
	return nil
}

// checkDirsApart refuses a spool and an RRD directory that overlap (the
// same directory, or one inside the other, after symlinks): the spool's
// walks would take the RRD files for foreign files at the spool root and
// quarantine them, and the writer would create them again, empty.
func (c *config) checkDirsApart() error {
	for _, p := range []struct{ outer, outerFlag, inner, innerFlag string }{
		{c.spool.Dir, "spool-dir", c.writer.Dir, "rrd-dir"},
		{c.writer.Dir, "rrd-dir", c.spool.Dir, "spool-dir"},
	} {
		in, err := fileutil.Contains(p.outer, p.inner)
		if err != nil {
			return fmt.Errorf("check --spool-dir, --rrd-dir: %w", err)
		}
		if in {
			return fmt.Errorf("check --spool-dir, --rrd-dir: the directories overlap: --%s %s is --%s %s or inside it; give each a directory of its own", p.innerFlag, p.inner, p.outerFlag, p.outer)
		}
	}
	return nil
}

func parseLevel(s string) *slog.Level {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return nil
	}
	return &l
}

func (c *config) logger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: *parseLevel(c.logLevel)}
	if c.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// settings returns the effective value of every flag, secrets masked.
func settings(fs *pflag.FlagSet) map[string]string {
	m := map[string]string{}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name == "test" || f.Name == "version" {
			return
		}
		v := f.Value.String()
		if f.Name == "admin-token" && v != "" {
			v = "(set)"
		}
		m[f.Name] = v
	})
	return m
}

func printSettings(w io.Writer, m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s=%s\n", k, m[k])
	}
}

// protocolOnly makes a daemon that serves rrdcached's protocol (--listen)
// start without a targets file when none was named and the default one
// does not exist: it polls nothing and serves the protocol.
func (c *config) protocolOnly(targetsNamed bool) {
	if targetsNamed || len(c.protocol.server.Listeners) == 0 {
		return
	}
	if _, err := os.Stat(c.targetsFile); errors.Is(err, fs.ErrNotExist) {
		c.targetsFile = ""
	}
}
