package doctor

import (
	"time"

	"github.com/prometheus/procfs"

	"github.com/spoold/spoold/internal/confine"
)

// Options say what to examine, with the daemon's settings to weigh it by.
// They are values: the daemon's wiring (cmd/spoold) fills them from its
// flags and passes the functions that count and measure.
type Options struct {
	// SpoolDir and RRDDir are the daemon's --spool-dir and --rrd-dir. A
	// directory that does not exist yet is examined through its nearest
	// existing parent.
	SpoolDir, RRDDir string
	// CountSpool counts, by names only, the files in the leaf directories
	// of the spool at dir and those directories (the loader's own walk,
	// spool.CountFiles with the daemon's --levels); a dir that does not
	// exist gives an error wrapping fs.ErrNotExist. nil (or a nil
	// Loader.Estimate) skips the spool finding.
	CountSpool func(dir string) (files uint64, leafDirs int, err error)
	// Loader are the loader settings whose load time is estimated.
	Loader LoaderSettings
	// PollConcurrency, Writers and SegmentOpenFiles are the open files
	// the daemon needs at once (one UDP socket per poll, an RRD file and a
	// spool entry per writer, the held descriptors of open spool
	// segments), checked against RLIMIT_NOFILE.
	PollConcurrency, Writers, SegmentOpenFiles int
	// CheckRRDDir reports whether the daemon can create files in the RRD
	// directory dir (rrdwriter.CheckDir: a probe file created and
	// removed); nil skips the check.
	CheckRRDDir func(dir string) error
	// OpenSampleRRD opens what creates and updates the sample file of the
	// measurement beneath dir, the measurement's temporary directory, as
	// the daemon's writer would; nil skips the measurement.
	OpenSampleRRD func(dir string) (SampleRRD, error)
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

// LoaderSettings are the daemon's loader_* settings (--loader-files,
// --loader-sleep, --loader-threshold, --loader-cpu) and the loader's
// estimate of a load under them.
type LoaderSettings struct {
	Files            int
	Sleep, Threshold time.Duration
	// CPU, above zero, is the share of one core the loader holds itself
	// to; Files and Sleep are not used then.
	CPU float64
	// Estimate is the loader's estimate of a load of files entry files
	// whose walk takes workSeconds (loader.Params.EstimateLoad): its
	// iterations (none in CPU mode), its sleep and its whole time.
	Estimate func(files uint64, workSeconds float64) (iterations uint64, sleepSeconds, loadSeconds float64)
}

func (l LoaderSettings) cpuMode() bool { return l.CPU > 0 }

// SampleRRD creates and updates RRD files beneath the directory it was
// opened on.
type SampleRRD interface {
	// Create creates the RRD file at path with ds gauge data sources of
	// the given step and the default archives, accepting updates after
	// start (Unix seconds).
	Create(path string, ds int, step time.Duration, start int64) error
	// Update gives the file at path, created by Create, the values of its
	// data sources, in order, at t (Unix seconds).
	Update(path string, t int64, values []string) error
	Close() error
}

// DefaultOptions returns the doctor's own defaults; the caller sets the
// directories and the daemon's settings.
func DefaultOptions() Options {
	return Options{
		LoadTimeLimit: 5 * time.Minute,
		ProcDir:       procfs.DefaultMountPoint,
		SysDir:        "/sys",
	}
}
