package loader

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/spoold/spoold/internal/optcheck"
)

// Indexer is the in-memory index the loader fills (shm.Index in the daemon).
//
// Add indexes the entry with the given key hash and poll time. It returns
// (true, nil) when the entry was added, (false, nil) when it was already
// indexed (the poller added it concurrently, or an earlier walk did), and an
// error otherwise. Full says whether such an error means the index is
// full: the entry then stays on disk for a later walk, counted in
// Stats.Full; any other error is counted in Stats.Errors and logged. The
// loader knows an entry's hash from its name but not its key
// (reading the key would take an open(2)), so it passes key == "".
// Add must be safe for use concurrently with the index's other users; the
// loader itself calls it from one goroutine.
type Indexer interface {
	Add(hash uint64, key string, ts int64) (bool, error)
	Full(err error) bool
}

// Options configure a Loader.
type Options struct {
	// Params are the throttle settings at start; SetParams changes them.
	Params Params
	// Clock tells time, sleeps and measures thread CPU; nil is the real one.
	Clock Clock
	// Logger receives progress lines, the summary and problems; nil
	// discards them.
	Logger *slog.Logger
	// ProgressEvery is the interval of progress log lines, measured on
	// Clock and checked after each file and directory; 0 logs only the
	// summary.
	ProgressEvery time.Duration
	// DryRun changes nothing on disk (`spoold load`): stale temp files
	// stay in tmp/, and a file the walk would quarantine stays where it is,
	// counted in Stats.Quarantined and logged with its reason. Use it with
	// a spool opened read-only.
	DryRun bool
	// RescanInterval is how long after a walk ended Rescans walks the
	// spool again, for entries other processes dropped in or a full index
	// left on disk; 0 never (the flag --rescan-interval). Default 15
	// minutes.
	RescanInterval time.Duration
}

// DefaultOptions returns DefaultParams, the real clock, no logger, a
// progress line every 5 seconds and a rescan every 15 minutes.
func DefaultOptions() Options {
	return Options{Params: DefaultParams(), ProgressEvery: 5 * time.Second, RescanInterval: 15 * time.Minute}
}

// Validate reports the first option out of range, as a
// *optcheck.FieldError naming its field (Params' by their nginx names);
// New calls it.
func (o Options) Validate() error {
	if err := o.Params.Validate(); err != nil {
		return err
	}
	if o.ProgressEvery < 0 {
		return optcheck.Errorf("ProgressEvery", fmt.Sprintf("must be >= 0, got %s", o.ProgressEvery))
	}
	if o.RescanInterval < 0 {
		return optcheck.Errorf("RescanInterval", "must be >= 0")
	}
	return nil
}
