package loader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spoold/spoold/internal/fileutil"
	"github.com/spoold/spoold/spool"
)

// Loader walks a spool into an index. Its methods are safe for concurrent
// use, but only one Run goes at a time.
type Loader struct {
	sp      *spool.Spool
	ix      Indexer
	clock   Clock
	log     *slog.Logger
	every   time.Duration // progress log interval; 0 = summary only
	dryRun  bool          // change nothing on disk: report quarantines, keep temp files
	params  atomic.Pointer[Params]
	changed broadcast // signalled by SetParams: a pause reckons again
	c       counters
	ready   *readiness
	noAtime fileutil.NoAtime // directories opened without atime updates
	// rescanEvery is Options.RescanInterval; nextRescan is when Rescans
	// walks again, Unix nanoseconds, 0 while a walk runs or when none is
	// scheduled.
	rescanEvery time.Duration
	nextRescan  atomic.Int64
	roomEvery   time.Duration // roomCheck
	// forceUnknown makes walks see every d_type as DT_UNKNOWN (tests).
	forceUnknown bool
}

// New returns a loader of the spool sp into ix. It validates opts.
func New(sp *spool.Spool, ix Indexer, opts Options) (*Loader, error) {
	if sp == nil || ix == nil {
		return nil, errors.New("create loader: spool and indexer are required")
	}
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("create loader: %w", err)
	}
	l := &Loader{sp: sp, ix: ix, clock: opts.Clock, log: opts.Logger,
		every: opts.ProgressEvery, dryRun: opts.DryRun, ready: newReadiness(sp.Levels()),
		rescanEvery: opts.RescanInterval, roomEvery: roomCheck}
	if l.clock == nil {
		l.clock = newRealClock()
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	p := opts.Params
	l.params.Store(&p)
	l.changed.ch = make(chan struct{})
	l.c.iterationFiles.Store(cpuInitialFiles)
	return l, nil
}

// SetParams validates p and, if valid, makes it the loader's parameters.
// While Run is going, they take effect at the throttle check after the file
// in hand (the check that follows every file), and a pause in progress ends
// as soon as the pause p asks for has passed (Sleep 0 ends it at once).
func (l *Loader) SetParams(p Params) error {
	if err := p.Validate(); err != nil {
		return err
	}
	l.params.Store(&p)
	l.changed.signal()
	l.log.Info("loader parameters changed", "files", p.Files, "sleep", p.Sleep,
		"threshold", p.Threshold, "cpu", p.CPU)
	return nil
}

// Params returns the current parameters.
func (l *Loader) Params() Params { return *l.params.Load() }

// Stats returns a snapshot of the current or last walk. It is safe to call
// from any goroutine at any time.
func (l *Loader) Stats() Stats {
	s := l.c.snapshot(l.clock.Now())
	s.Params = l.Params()
	s.Warmup = l.Warmup()
	if !s.Params.CPUMode() {
		s.IterationFiles = s.Params.Files
	}
	return s
}

// ErrRunning is returned by Run when another Run of the same loader is
// going.
var ErrRunning = errors.New("loader is already running")

// Run walks the whole spool once: it removes stale temp files, then indexes
// every entry of every leaf directory in sorted order, throttled by the
// parameters, quarantining what does not belong. It can be called again
// later for a rescan (entries already indexed count as Existing), but not
// concurrently with itself (ErrRunning). It runs on the caller's goroutine,
// locked to its OS thread so that thread CPU time measures the walk. On
// ctx cancellation it stops at the next file or during a pause and returns
// ctx.Err(). Problems with single files or directories are counted and
// logged, and the walk goes on; only an unreadable spool root ends it with
// an error. The returned Stats are the final ones.
func (l *Loader) Run(ctx context.Context) (Stats, error) {
	if !l.c.running.CompareAndSwap(false, true) {
		return l.Stats(), fmt.Errorf("run loader: %w", ErrRunning)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w := l.newWalk(ctx)
	w.th.l = l
	err := w.run()
	l.finish(w, err)
	return l.Stats(), err
}

// finish records the end of a walk and logs the summary.
func (l *Loader) finish(w *walk, err error) {
	now := l.clock.Now()
	l.c.cpu.Store(int64(l.clock.ThreadCPU() - w.th.cpuRun))
	if err == nil {
		l.c.setProgress(1)
		l.ready.pass(l.ready.layout.LeafDirs())
		l.ready.all.Store(true)
	}
	l.c.finished.Store(now.UnixNano())
	l.c.running.Store(false)
	l.logSummary(l.Stats(), err)
}

// broadcast wakes every goroutine waiting on it: signal closes the channel
// wait returned and makes a new one.
type broadcast struct {
	mu sync.Mutex
	ch chan struct{}
}

func (b *broadcast) wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ch
}

func (b *broadcast) signal() {
	b.mu.Lock()
	defer b.mu.Unlock()
	close(b.ch)
	b.ch = make(chan struct{})
}
