package main

import (
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/spoold/spoold/admin"
	"github.com/spoold/spoold/fleet"
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

	targetsFile    string
	profilesFile   string
	mibDirs        []string
	rescanInterval time.Duration

	diskStatsInterval time.Duration

	adminListen     string
	adminToken      string
	adminCache      time.Duration
	graphMaxDS      int
	shutdownTimeout time.Duration
	pidFile         string
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
		targetsFile: "/etc/spoold/targets.conf", rescanInterval: 15 * time.Minute, diskStatsInterval: 10 * time.Second,
		adminListen: "127.0.0.1:8780", adminCache: 250 * time.Millisecond, graphMaxDS: rrdwriter.DefaultGraphMaxDS, shutdownTimeout: 2 * time.Minute,
		logFormat: "text", logLevel: "info",
	}
	c.spool.Dir = "/var/spool/spoold"
	c.spool.PrecreateDirs = true
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
	fs.StringVar(&c.targetsFile, "targets", c.targetsFile, "targets file (docs/configuration.md); reloaded on SIGHUP")
	fs.StringVar(&c.profilesFile, "profiles", c.profilesFile, "profiles file; empty = built-in profiles only; reloaded on SIGHUP")
	fs.DurationVar(&c.poller.Interval, "poll-interval", c.poller.Interval, "time between poll cycle starts; also the RRD step of new files")
	fs.IntVar(&c.poller.Concurrency, "poll-concurrency", c.poller.Concurrency, "most SNMP polls in flight (one UDP socket each)")
	fs.DurationVar(&c.poller.Timeout, "poll-timeout", c.poller.Timeout, "wait for one SNMP response; a target's timeout= overrides it")
	fs.IntVar(&c.poller.Retries, "poll-retries", c.poller.Retries, "resends after a timeout; a target's retries= overrides it")
	fs.DurationVar(&c.poller.CycleTimeout, "poll-cycle-timeout", c.poller.CycleTimeout, "end a cycle after this long (0 = 90% of --poll-interval)")
	fs.IntVar(&c.poller.MaxVarbinds, "poll-max-varbinds", c.poller.MaxVarbinds, "most OIDs in one SNMP Get")
	addShardFlags(fs, &c.poller)
	addTableFlags(fs, c)

	addSpoolFlags(g[1].fs, &c.spool)
	addIndexFlags(g[1].fs, &c.index)

	addLoaderFlags(g[2].fs, &c.loader.Params)
	g[2].fs.DurationVar(&c.rescanInterval, "rescan-interval", c.rescanInterval, "walk the spool again this long after a walk ended, for entries other processes dropped in or a full index left on disk (0 = never)")

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
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", c.shutdownTimeout, "on SIGTERM, how long to flush pending values into RRD files; the rest stays in the spool")
	fs.DurationVar(&c.diskStatsInterval, "disk-stats-interval", c.diskStatsInterval, "sample the disks behind --spool-dir and --rrd-dir (iostat -x figures) and spoold's own I/O this often, for /status, /metrics and the page")
	fs.StringVar(&c.pidFile, "pid-file", c.pidFile, "write the process id to this file")
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

// check validates the whole configuration, for the daemon and for -t
// alike: first each flag against its documented range, so that the error
// names the flag; then each package's own validation of the options built
// from the flags (what New would refuse), named by the flags behind them.
// fleetFiles are the configuration files a fleet generation loads, and
// the poll interval its RRD layouts take as their step.
func (c *config) fleetFiles() fleet.Files {
	return fleet.Files{Targets: c.targetsFile, Profiles: c.profilesFile, MIBDirs: c.mibDirs, Step: c.poller.Interval}
}

func (c *config) check() error {
	if err := c.checkFlags(); err != nil {
		return err
	}
	if err := c.checkForwardFlags(); err != nil {
		return err
	}
	if err := c.checkDirsApart(); err != nil {
		return err
	}
	if err := c.loader.Params.Validate(); err != nil {
		// Validate names the parameter first: "loader_files must be >= 1".
		param, _, _ := strings.Cut(err.Error(), " ")
		return fmt.Errorf("check --%s: %w", strings.ReplaceAll(param, "_", "-"), err)
	}
	if _, err := shm.New(c.index); err != nil {
		return fmt.Errorf("check --keys-zone: %w", err)
	}
	if err := c.poller.Validate(); err != nil {
		return fmt.Errorf("check --poll-*: %w", err)
	}
	if err := c.writer.Validate(); err != nil {
		return fmt.Errorf("check --rrd-dir, --write-*, --writers: %w", err)
	}
	if err := c.protocol.check(c.writer.Dir); err != nil {
		return err
	}
	if c.adminListen != "" {
		if err := admin.CheckListen(c.adminListen); err != nil {
			return fmt.Errorf("check --admin-listen: %w", err)
		}
	}
	return nil
}

// checkFlags checks each flag against its range (docs/configuration.md).
func (c *config) checkFlags() error {
	rate := c.writer.WriteRate
	checks := []struct {
		bad  bool
		flag string
		msg  string
	}{
		{c.spool.Dir == "", "spool-dir", "must not be empty"},
		{c.writer.Dir == "", "rrd-dir", "must not be empty"},
		{c.targetsFile == "", "targets", "must not be empty"},
		{c.poller.Interval < time.Second, "poll-interval", "must be at least 1s"},
		{c.poller.Concurrency < 1, "poll-concurrency", "must be at least 1"},
		{c.poller.Timeout <= 0, "poll-timeout", "must be positive"},
		{c.poller.Retries < 0 || c.poller.Retries > fleet.MaxRetries, "poll-retries", fmt.Sprintf("must be 0 to %d", fleet.MaxRetries)},
		{c.poller.CycleTimeout < 0 || c.poller.CycleTimeout > c.poller.Interval, "poll-cycle-timeout", "must be 0 to --poll-interval"},
		{c.poller.MaxVarbinds < 1 || c.poller.MaxVarbinds > poller.MaxVarbinds, "poll-max-varbinds", fmt.Sprintf("must be 1 to %d", poller.MaxVarbinds)},
		{c.poller.MaxRepetitions < 1 || c.poller.MaxRepetitions > poller.MaxRepetitions, "poll-max-repetitions", fmt.Sprintf("must be 1 to %d", poller.MaxRepetitions)},
		{c.poller.MaxTableRows < 1 || c.poller.MaxTableRows > poller.MaxTableRows, "poll-max-table-rows", fmt.Sprintf("must be 1 to %d", poller.MaxTableRows)},
		{c.poller.RediscoverInterval < 0, "rediscover-interval", "must be >= 0"},
		{c.poller.DiscoveryConcurrency < 1, "discovery-concurrency", "must be at least 1"},
		{c.poller.DiscoveryTimeout < 0, "discovery-timeout", "must be >= 0"},
		{c.poller.MaxFilesPerTarget < 1, "max-files-per-target", "must be at least 1"},
		{c.poller.NewFilesPerHour < 0, "max-new-files-per-hour", "must be >= 0"},
		{c.index.MaxBytes < minKeysZone, "keys-zone", "must be at least 1k"},
		{c.rescanInterval < 0, "rescan-interval", "must be >= 0"},
		{c.spool.SegmentMaxBytes < spool.MinSegmentBytes || c.spool.SegmentMaxBytes > spool.MaxSegmentBytes, "segment-max-bytes", "must be 4k to 64m"},
		{c.spool.SegmentMaxEntries < 1 || c.spool.SegmentMaxEntries > 1<<20, "segment-max-entries", "must be 1 to 1048576"},
		{c.spool.SegmentOpenFiles < 0 || c.spool.SegmentOpenFiles > spool.MaxSegmentOpenFiles, "segment-open-files", "must be 0 to 65536"},
		{c.writer.FutureTolerance < 0, "future-tolerance", "must be >= 0"},
		{c.writer.WriteDelay < 0, "write-delay", "must be >= 0"},
		{c.writer.WriteJitter < 0, "write-jitter", "must be >= 0"},
		{c.writer.Writers < 1, "writers", "must be at least 1"},
		{rate != 0 && !(rate >= rrdwriter.MinWriteRate && rate <= rrdwriter.MaxWriteRate), "write-rate",
			fmt.Sprintf("must be 0 (no cap) or %g to %g", rrdwriter.MinWriteRate, rrdwriter.MaxWriteRate)},
		{c.writer.BackoffMin <= 0, "write-backoff-min", "must be positive"},
		{c.writer.BackoffMax < c.writer.BackoffMin, "write-backoff-max", "must be >= --write-backoff-min"},
		{c.shutdownTimeout <= 0, "shutdown-timeout", "must be positive"},
		{c.diskStatsInterval < 100*time.Millisecond, "disk-stats-interval", "must be at least 100ms"},
		{c.adminCache < 0, "admin-status-cache", "must be >= 0"},
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
