package doctor

import (
	"time"

	"github.com/prometheus/procfs"

	"github.com/spoold/spoold/internal/confine"
	"github.com/spoold/spoold/loader"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/spool"
)

// Options say what to examine, with the daemon's settings to weigh it by.
type Options struct {
	// SpoolDir and RRDDir are the daemon's --spool-dir and --rrd-dir. A
	// directory that does not exist yet is examined through its nearest
	// existing parent.
	SpoolDir, RRDDir string
	// Levels is the spool layout (--levels), used to count entries.
	Levels string
	// Loader are the loader settings whose load time is estimated.
	Loader loader.Params
	// PollConcurrency and Writers are the open files the daemon needs at
	// once (one UDP socket per poll, an RRD file and a spool entry per
	// writer), checked against RLIMIT_NOFILE.
	PollConcurrency, Writers int
	// RRD makes the RRD that creates and updates the sample file of the
	// measurement, beneath the root of its temporary directory; nil skips
	// the measurement.
	RRD func(root *rrd.Root) rrdwriter.RRD
	// LoadTimeLimit is the implied loader time above which the spool
	// finding warns. Default 5 minutes, one poll cycle.
	LoadTimeLimit time.Duration
	// ProcDir is the proc file system: mount options are read from
	// ProcDir/self/mountinfo (through procfs). Default /proc.
	ProcDir string
	// Landlock is whether the daemon would confine its file access
	// (confine.Probe of its --landlock); nil skips the check.
	Landlock *confine.Status
	// SysDir is the sys file system: whether an ext4 volume has a journal
	// is read from SysDir/fs/ext4/<device>/journal_task. Default /sys.
	SysDir string
}

// DefaultOptions returns the daemon's defaults and the real librrd.
func DefaultOptions() Options {
	return Options{
		SpoolDir:        "/var/spool/spoold",
		RRDDir:          "/var/lib/spoold/rrd",
		Levels:          spool.DefaultOptions().Levels,
		Loader:          loader.DefaultParams(),
		PollConcurrency: poller.DefaultOptions().Concurrency,
		Writers:         rrdwriter.DefaultOptions().Writers,
		RRD:             rrdwriter.LibRRD,
		LoadTimeLimit:   5 * time.Minute,
		ProcDir:         procfs.DefaultMountPoint,
		SysDir:          "/sys",
	}
}
