package rrdwriter

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/spoold/spoold/internal/optcheck"
	"github.com/spoold/spoold/rrd"
)

// Options configure a Writer.
type Options struct {
	// Dir holds the RRD files; see rrd.RRDPath. It is created if missing.
	Dir string
	// Layout returns the file layout of a target (from its profile), used
	// to create its file and to check an existing file's data sources.
	// Without one an
	// existing file is still written; a missing one is an error
	// (KindNoProfile) on that target.
	Layout func(key string) (rrd.Layout, bool)
	// WriteDelay is how long after its oldest pending poll (the poll time,
	// not when the entry was indexed: a backlog found at start is due at
	// once) a target is written (rrdcached -w, default there 300 s, and
	// 1800 s in the setups its users are told to run). Default 30 minutes:
	// with 5-minute polls each update carries 6 to 9 values, graphs and
	// flushes write a target first, and the spool keeps everything durable
	// meanwhile, so waiting costs nothing but index memory.
	WriteDelay time.Duration
	// WriteJitter adds up to this much to WriteDelay, pseudo-randomly per
	// target and batch (rrdcached -z), so targets polled together are
	// written at different times. Default 15 minutes (rrdcached -z 900).
	WriteJitter time.Duration
	// Writers is the number of files written at once. Default 4.
	Writers int
	// Prefetch asks the kernel, before each update, for every page of the
	// file the update will touch, all at once (see prefetch.go): on a cold
	// page cache the update then waits for about one disk read instead of
	// one per page. Default true.
	Prefetch bool
	// RRDFsync says when an updated RRD file is made durable before the
	// spool segments it replaces are removed (see durable.go): SyncNone
	// (default), SyncAlways (fdatasync each file after its update) or
	// SyncBatch (one syncfs for every file updated meanwhile).
	RRDFsync SyncPolicy
	// FutureTolerance is how far ahead of the clock an entry's poll time
	// may be; a later entry is quarantined, not applied (once in the file
	// it would make every real poll after it look already applied).
	// Default 10 minutes.
	FutureTolerance time.Duration
	// WriteRate caps files started per second by Run; 0 means no cap.
	// Priority flushes are not counted.
	WriteRate float64
	// BackoffMin and BackoffMax bound the exponential backoff of a failing
	// target. Defaults 10 s and 10 min.
	BackoffMin, BackoffMax time.Duration
	// MaxRetries bounds the update calls of one batch after librrd rejected
	// a row (each rejection quarantines one entry). Default 16.
	MaxRetries int
	// Tick is how often Run looks for due targets. Default 1 s.
	Tick time.Duration
	// OnTick, if set, is called by Run's loop each time it wakes (every
	// Tick at least), before it looks for due targets: the loop is alive
	// (the daemon's systemd watchdog). It must return at once.
	OnTick func()
	// Ready tells which keys are complete in the index (the loader's leaf
	// readiness); nil means all are. A key that is not ready is never
	// taken by Run; FlushKey and FlushAll make keys ready first.
	Ready Readiness
	// Forward, when not empty, is the address of a remote rrdcached or
	// spoold ("unix:PATH", "tcp:HOST:PORT"; see rrdcached.ParseAddress)
	// that every file is written to instead of librrd (forward.go). RRD
	// must then be nil, Prefetch is off and RRDFsync must be SyncNone:
	// the files are the remote's.
	Forward string
	// ForwardTimeout bounds one exchange with the forward peer (a file's
	// batch: BATCH, FLUSH, INFO). Default 30 s.
	ForwardTimeout time.Duration
	// Native makes LocalRRD (the RRD used when RRD is nil and there is no
	// Forward) update files with package rrd's native path, librrd only
	// for what it does not handle (NativeRRD). Default true.
	Native bool
	// OpenFiles bounds the RRD files the native path keeps open between
	// updates, with their parsed headers. Default 1,024.
	OpenFiles int
	// RRD is the librrd boundary; nil means LocalRRD on an rrd.Root the
	// writer opens on Dir (or the forwarder). One given must have its Root
	// on Dir (LocalRRD, LibRRD, NewNativeRRD on rrd.MakeRoot(Dir), wrapped
	// or not), or none (an RRD without local files).
	RRD RRD
	// Logger receives failures and quarantines; nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now. It must be the index's clock.
	Now func() time.Time
}

// Readiness is what the writer needs of the loader: *loader.Loader.
type Readiness interface {
	// Ready reports whether every spooled entry of the key of hash is in
	// the index. It is called with an index shard locked: it must be cheap.
	Ready(hash uint64) bool
	// EnsureLeaf makes the key of hash ready now (walks its leaf).
	EnsureLeaf(ctx context.Context, hash uint64) error
	// EnsureAll makes every key ready now (walks what is left).
	EnsureAll(ctx context.Context) error
}

// DefaultOptions returns the defaults documented on Options (Dir and
// Layout are left empty).
func DefaultOptions() Options {
	return Options{
		WriteDelay:  30 * time.Minute,
		WriteJitter: 15 * time.Minute,
		Writers:     4,
		Prefetch:    true,
		Native:      true,
		OpenFiles:   1024,
		BackoffMin:  10 * time.Second,
		BackoffMax:  10 * time.Minute,
		MaxRetries:  16,
		Tick:        time.Second,

		FutureTolerance: 10 * time.Minute,
		ForwardTimeout:  30 * time.Second,
	}
}

// The range of Options.WriteRate besides 0 (no cap): below MinWriteRate
// the interval between two files overflows a time.Duration (1e-12 acted as
// no cap); above MaxWriteRate it is below a microsecond, which is no cap.
const (
	MinWriteRate = 0.001
	MaxWriteRate = 1e6
)

// Validate reports the first option out of range, as a
// *optcheck.FieldError naming its field; New calls it.
func (o Options) Validate() error {
	bad := func(field, msg string) error {
		return fmt.Errorf("check writer options: %w", optcheck.Errorf(field, msg))
	}
	switch {
	case o.Dir == "":
		return bad("Dir", "must not be empty")
	case o.FutureTolerance < 0:
		return bad("FutureTolerance", "must be >= 0")
	case o.WriteDelay < 0:
		return bad("WriteDelay", "must be >= 0")
	case o.WriteJitter < 0:
		return bad("WriteJitter", "must be >= 0")
	case o.OpenFiles < 1:
		return bad("OpenFiles", "must be at least 1")
	case o.Writers < 1:
		return bad("Writers", "must be at least 1")
	case o.WriteRate != 0 && !(o.WriteRate >= MinWriteRate && o.WriteRate <= MaxWriteRate):
		return bad("WriteRate", fmt.Sprintf("must be 0 (no cap) or %g to %g", MinWriteRate, MaxWriteRate))
	case o.BackoffMin <= 0:
		return bad("BackoffMin", "must be positive")
	case o.BackoffMax < o.BackoffMin:
		return bad("BackoffMax", "must be >= {BackoffMin}")
	case o.MaxRetries < 1:
		return bad("MaxRetries", "must be at least 1")
	case o.Tick <= 0:
		return bad("Tick", "must be positive")
	case o.Forward != "" && o.RRD != nil:
		return bad("RRD", fmt.Sprintf("must be nil with {Forward} %s: choose one", o.Forward))
	case o.RRD != nil && o.RRD.Root() != nil && o.RRD.Root().Dir() != filepath.Clean(o.Dir):
		return bad("RRD", fmt.Sprintf("opens its files beneath %s, not beneath {Dir} %s", o.RRD.Root().Dir(), o.Dir))
	case o.Forward != "" && o.ForwardTimeout <= 0:
		return bad("ForwardTimeout", "must be positive")
	case o.Forward != "" && o.RRDFsync != SyncNone:
		return bad("RRDFsync", fmt.Sprintf("must be none with {Forward} %s (the RRD files are the remote's)", o.Forward))
	}
	return nil
}

// check validates o and fills in the defaults of its nil fields.
func (o *Options) check() error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Forward != "" {
		f, err := newForwarder(o)
		if err != nil {
			return err
		}
		o.RRD, o.Prefetch = f, false
	}
	if o.RRD == nil {
		root, err := rrd.MakeRoot(o.Dir)
		if err != nil {
			return err
		}
		o.RRD = LocalRRD(root, *o)
	}
	if o.Layout == nil {
		o.Layout = func(string) (rrd.Layout, bool) { return rrd.Layout{}, false }
	}
	return nil
}
