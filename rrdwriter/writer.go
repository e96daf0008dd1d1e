package rrdwriter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

// Writer writes the pending entries of an index into RRD files. Create it
// with New; it is safe for concurrent use.
type Writer struct {
	o   Options
	sp  *spool.Spool
	ix  *shm.Index
	log *slog.Logger

	keys *owner // every key's write state, and its one owner: owner.go

	filesMu sync.Mutex
	files   map[uint64]*fileState
	dsSets  dataSources // the targets' lists of data sources, shared

	running atomic.Bool
	c       counters
	rq      *removals  // the removal stage: removal.go
	syncs   *syncGroup // syncfs of the RRD file system (durable.go)
	// flushes counts the FlushAll calls going on (a SIGUSR1, a POST /flush,
	// the shutdown's), so that WaitFlushes can wait for them all before the
	// spool is closed under them.
	flushes sync.WaitGroup
	fwd     *forwarder // nil unless Options.Forward
	segBufs sync.Pool  // *spool.SegmentBuffer of the passes (apply.go)
	rowBufs sync.Pool  // *rowScratch of the updates (buildRows)
	// cachedRun counts the prefetches in a row that found their file's
	// header in the page cache; from aheadAfterCached on, the read-ahead
	// opens no file (prefetch.go).
	cachedRun        atomic.Int64
	aheadAfterCached int64
}

// New returns a writer of the entries indexed in ix, stored in sp, into
// RRD files under o.Dir (created if missing). The index must use the same
// clock as o.Now.
func New(sp *spool.Spool, ix *shm.Index, o Options) (*Writer, error) {
	if err := o.check(); err != nil {
		return nil, fmt.Errorf("new rrd writer: %w", err)
	}
	if err := os.MkdirAll(o.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("new rrd writer: create directory: %w", err)
	}
	w := &Writer{
		o: o, sp: sp, ix: ix, log: o.Logger,
		keys:  newOwner(o.WriteRate),
		files: make(map[uint64]*fileState),

		aheadAfterCached: aheadAfterCached,
	}
	w.syncs = newSyncGroup(func() error { return w.o.RRD.Root().SyncFS() })
	w.rq = newRemovals(func(r spool.Ref) { w.removeSegment(w.sp, r) }, w.o.Writers)
	w.rq.durable, w.rq.keep = w.durable, w.keepUnsynced
	w.segBufs.New = func() any { return new(spool.SegmentBuffer) }
	w.rowBufs.New = func() any { return new(rowScratch) }
	w.fwd, _ = o.RRD.(*forwarder)
	return w, nil
}

// Close closes the connection to the forward peer, if any (the next write
// would open it again). It is safe to call twice.
func (w *Writer) Close() error {
	if w.fwd == nil {
		return nil
	}
	return w.fwd.close()
}

// Run writes due targets until ctx ends: every Tick, and whenever a writer
// slot frees, it takes up to the free slots (and the rate allows) of due
// targets and writes each on its own goroutine, at most Writers at once.
// When ctx ends it waits for the files being written and returns nil; the
// caller then calls FlushAll for the rest. Only one Run may run at a time.
func (w *Writer) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("run rrd writer: already running")
	}
	defer w.running.Store(false)
	defer w.rq.wait() // after the writers
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, w.o.Writers)
	freed := make(chan struct{}, 1)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		case <-freed:
		}
		if w.o.OnTick != nil {
			w.o.OnTick()
		}
		now := w.o.Now()
		w.retryStuck()
		for _, b := range w.takeDue(now, cap(slots)-len(slots)) {
			slots <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = w.apply(b) // counted and shown by fail
				<-slots
				select {
				case freed <- struct{}{}:
				default:
				}
			}()
		}
		timer.Reset(w.nextWait(now))
	}
}

func (w *Writer) nextWait(now time.Time) (d time.Duration) {
	d = w.o.Tick
	w.own(func(tb *table) {
		if l := tb.lim.wait(now); l > 0 && l < d {
			d = l
		}
	})
	return d
}

// runOnce writes the targets due at now on the caller's goroutine, like
// one round of Run, and returns how many batches it wrote. For tests.
func (w *Writer) runOnce(now time.Time) int {
	batches := w.takeDue(now, w.o.Writers)
	for _, b := range batches {
		_ = w.apply(b)
	}
	w.rq.wait()
	return len(batches)
}

// takeDue takes up to max due batches, as the rate allows, and registers
// them in flight.
func (w *Writer) takeDue(now time.Time, max int) (batches []shm.Batch) {
	w.own(func(tb *table) {
		n := tb.lim.allow(now, max)
		if n == 0 {
			return
		}
		batches = w.ix.TakeDue(now, func(hash uint64, since time.Time) time.Time { return w.due(tb, hash, since) }, n, nil)
		tb.lim.spend(len(batches))
		tb.register(batches)
	})
	return batches
}

// register marks batches in flight.
func (tb *table) register(batches []shm.Batch) {
	for _, b := range batches {
		tb.inflight[b.Hash] = make(chan struct{})
	}
}

// end ends the batch of hash in flight: done (the index's Done and the
// spool's Unseal) and the end of the in-flight state run in one own. No
// pass may take the key between the two (every take runs in own): a batch
// taken there would have its names given back by this batch's Unseal and
// its in-flight state ended by this one's end, and a segment created
// meanwhile under one of its names would be counted as a duplicate of it
// and forgotten, never written while the process runs.
func (w *Writer) end(hash uint64, done func()) {
	var ch chan struct{}
	w.own(func(tb *table) {
		if done != nil {
			done()
		}
		ch = tb.inflight[hash]
		delete(tb.inflight, hash)
	})
	if ch != nil {
		close(ch)
	}
}

// FlushKey writes every pending entry of key now, bypassing delay, jitter,
// rate and backoff; if a batch of key is being written it waits for it
// first. It returns the write's error, or ctx's if ctx ends while waiting.
// When it returns nil, every entry of key indexed before the call is in the
// RRD file (or was settled otherwise: vanished, quarantined). It returns
// once the file is written: the applied segments are removed after it, on
// the removal queue, and the key stays in flight until they are (WaitKey
// waits for that; the next FlushKey of key does).
func (w *Writer) FlushKey(ctx context.Context, key string) error {
	hash := spool.KeyHash(key)
	if w.o.Ready != nil {
		if err := w.o.Ready.EnsureLeaf(ctx, hash); err != nil {
			return fmt.Errorf("flush %s: %w", key, err)
		}
	}
	if w.isHeld(hash) {
		return fmt.Errorf("flush %s: %w", key, ErrHeld)
	}
	if w.retryStuck() > 0 && w.isStuck(hash) {
		return fmt.Errorf("flush %s: applied spool segments of it cannot be removed (see the log); it waits", key)
	}
	for {
		var (
			wait chan struct{}
			b    shm.Batch
			ok   bool
		)
		w.own(func(tb *table) {
			if wait = tb.inflight[hash]; wait != nil {
				return
			}
			if b, ok = w.ix.TakeKey(hash); ok {
				tb.register([]shm.Batch{b})
			}
		})
		if wait != nil {
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return fmt.Errorf("flush %s: %w", key, ctx.Err())
			}
		}
		if !ok {
			return nil
		}
		w.c.flushesPriority.Add(1)
		if b.Key == "" {
			b.Key = key
		}
		return w.apply(b)
	}
}

// WaitKey waits until no batch of key is in flight: its applied segments
// are removed and the index holds only what is still to write. It returns
// ctx's error if ctx ends first.
func (w *Writer) WaitKey(ctx context.Context, key string) error {
	hash := spool.KeyHash(key)
	if err := w.waitUntil(ctx, func(tb *table) chan struct{} { return tb.inflight[hash] }); err != nil {
		return fmt.Errorf("wait for the write of %s: %w", key, err)
	}
	return nil
}

// waitUntil waits until next (run in own) finds no batch in flight to
// wait for, or ctx ends.
func (w *Writer) waitUntil(ctx context.Context, next func(*table) chan struct{}) error {
	for {
		var ch chan struct{}
		w.own(func(tb *table) { ch = next(tb) })
		if ch == nil {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// WaitRemovals waits until every applied segment queued for removal before
// the call is removed.
func (w *Writer) WaitRemovals() { w.rq.wait() }

// FlushAll writes every pending entry now, Writers files at once,
// bypassing delay, jitter, rate and backoff (the shutdown flush). It also
// waits for batches Run is writing. It writes the keys that are ready
// first, then makes the rest ready (Readiness.EnsureAll) and writes them.
// A target that fails is tried once per pass and left alone once it
// failed; FlushAll returns when a pass finds nothing new to write, or when
// ctx ends. Its error counts the targets that failed (TargetErrors has the
// details); orphans (keys without a profile and without an RRD file,
// KindNoProfile) are no failure of the flush: their entries stay in the
// spool, and Orphans lists them.
func (w *Writer) FlushAll(ctx context.Context) error {
	w.flushes.Add(1)
	defer w.flushes.Done()
	failed := make(map[uint64]bool)
	if err := w.flushReady(ctx, failed); err != nil {
		return err
	}
	if w.o.Ready != nil {
		if err := w.o.Ready.EnsureAll(ctx); err != nil {
			return fmt.Errorf("flush all: %w", err)
		}
		if err := w.flushReady(ctx, failed); err != nil {
			return err
		}
	}
	w.rq.wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("flush all: %w", err)
	}
	if n := w.retryStuck(); n > 0 {
		return fmt.Errorf("flush all: %d targets wait for applied spool segments to be removed (see the log)", n)
	}
	if n := w.failedBesidesOrphans(failed); n > 0 {
		return fmt.Errorf("flush all: %d targets failed; see TargetErrors", n)
	}
	return nil
}

// StartFlushAll runs FlushAll(ctx) on a goroutine of its own and returns
// at once (rrdcached's FLUSHALL); done, if not nil, is called on that
// goroutine with FlushAll's error. WaitFlushes waits for it from the call
// on.
func (w *Writer) StartFlushAll(ctx context.Context, done func(error)) {
	w.flushes.Add(1)
	go func() {
		defer w.flushes.Done()
		err := w.FlushAll(ctx)
		if done != nil {
			done(err)
		}
	}()
}

// WaitFlushes waits until no FlushAll is going on, or ctx ends (then it
// returns ctx's error). The daemon calls it after its shutdown flush, so a
// flush started by SIGUSR1 or POST /flush has ended before the spool closes.
func (w *Writer) WaitFlushes(ctx context.Context) error {
	done := make(chan struct{})
	go func() { w.flushes.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for flushes: %w", ctx.Err())
	}
}

// flushReady writes every pending entry of the ready keys, in passes until
// one finds nothing new, or ctx ends.
func (w *Writer) flushReady(ctx context.Context, failed map[uint64]bool) error {
	w.retryStuck()
	for {
		if err := w.waitInflight(ctx); err != nil {
			return err
		}
		// The batches a pass gave back untried when ctx ended are
		// pending again: taking them again would never end.
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("flush all: %w", err)
		}
		batches := w.takeAll(failed)
		if len(batches) == 0 {
			return nil
		}
		w.applyAll(ctx, batches, failed)
	}
}

// failedBesidesOrphans counts the targets of failed whose error is not
// KindNoProfile.
func (w *Writer) failedBesidesOrphans(failed map[uint64]bool) (n int) {
	w.own(func(tb *table) {
		for h := range failed {
			if tb.errs[h].Kind != KindNoProfile {
				n++
			}
		}
	})
	return n
}

// Orphans returns the sorted keys of errs (TargetErrors) whose kind is
// KindNoProfile: keys whose pending entries cannot be written because no
// profile is configured for them and they have no RRD file. Their entries
// stay in the spool until the key is configured or an operator removes them.
func Orphans(errs []TargetError) []string {
	var keys []string
	for _, e := range errs {
		if e.Kind == KindNoProfile {
			keys = append(keys, e.Key)
		}
	}
	sort.Strings(keys)
	return keys
}

// takeAll takes every pending batch; those of targets that failed in this
// FlushAll, or are not ready, are given back at once.
func (w *Writer) takeAll(failed map[uint64]bool) (todo []shm.Batch) {
	w.own(func(tb *table) {
		all := w.ix.TakeAll(nil)
		todo = all[:0]
		for _, b := range all {
			if failed[b.Hash] || w.o.Ready != nil && !w.o.Ready.Ready(b.Hash) || tb.blocked(b.Hash) {
				w.ix.Done(b.Hash, nil, tb.errs[b.Hash].RetryAt)
				continue
			}
			todo = append(todo, b)
		}
		tb.register(todo)
	})
	return todo
}

// readAheadFactor sets how many files a flush prefetches ahead of its
// writers: this many per writer.
const readAheadFactor = 4

// applyAll writes batches with Writers goroutines and records failures.
func (w *Writer) applyAll(ctx context.Context, batches []shm.Batch, failed map[uint64]bool) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		sem   = make(chan struct{}, w.o.Writers)
		took  chan struct{} // a batch taken by a writer, for the read-ahead
		stop  = make(chan struct{})
		ahead sync.WaitGroup
	)
	if w.o.Prefetch && len(batches) > w.o.Writers {
		took = make(chan struct{}, len(batches)) // never full
		ahead.Add(1)
		go func() { defer ahead.Done(); w.readAhead(batches, took, readAheadFactor*w.o.Writers, stop) }()
	}
	defer ahead.Wait()
	defer close(stop)
	for _, b := range batches {
		if ctx.Err() != nil {
			w.finishUntried(b)
			continue
		}
		sem <- struct{}{}
		if took != nil {
			took <- struct{}{}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.apply(b); err != nil {
				mu.Lock()
				failed[b.Hash] = true
				mu.Unlock()
			}
			<-sem
		}()
	}
	wg.Wait()
}

// finishUntried gives a taken batch back untouched.
func (w *Writer) finishUntried(b shm.Batch) {
	w.end(b.Hash, func() { w.ix.Done(b.Hash, nil, time.Time{}) })
}

// waitInflight waits until no batch is in flight, or ctx ends.
func (w *Writer) waitInflight(ctx context.Context) error {
	err := w.waitUntil(ctx, func(tb *table) chan struct{} {
		for _, c := range tb.inflight {
			return c
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("flush all: %w", err)
	}
	return nil
}
