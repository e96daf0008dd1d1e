package rrdwriter

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/spool"
)

// fileState is the writer's state of one RRD file. mu is the per-file lock:
// it is held for every librrd call on the file (update, info, create,
// graph), so they never overlap inside the process.
type fileState struct {
	mu   sync.Mutex
	key  string
	info rrd.FileInfo // cached: Last moves forward with every update; DS shared (dataSources)
	// index maps a data source name to its position in info.DS (shared,
	// dataSources); nil while info is not loaded (known).
	index map[string]int
	// geometry is the file's geometry as of its last update (geometry.Last):
	// read by a prefetch, moved on by each update librrd accepts
	// (advanceGeometry), dropped when one fails. nil: read it again.
	geometry atomic.Pointer[rrd.Geometry]
	// prefetchedUntil is the last entry time the pages of the file are
	// asked for already (by ensureFile or the flush's read-ahead).
	prefetchedUntil atomic.Int64
	// cachedAt is the until of the last prefetch ahead of an update
	// (the read-ahead's: a batch's newest time) that found the file's
	// header in the page cache: the update of that batch asks again for
	// nothing.
	cachedAt atomic.Int64
	// ahead is the header the last prefetch read (the flush's read-ahead
	// runs before the file's writer takes t.mu): ensureFile takes it
	// instead of reading the header again.
	ahead atomic.Pointer[rrd.FileInfo]
}

// path is the path of t's file: made for each use, not kept for each of a
// fleet's files.
func (w *Writer) path(t *fileState) string {
	return filepath.Join(w.o.Dir, rrd.KeyPath(t.key))
}

// known reports whether t's info is loaded (or derived from a create).
func (t *fileState) known() bool { return t.index != nil }

// forget drops t's info: the next write reads the file's header again.
func (t *fileState) forget() { t.index = nil }

// setInfo caches fi as the file's state, its data sources and their
// index the ones of d equal to them.
func (t *fileState) setInfo(fi rrd.FileInfo, d *dataSources) {
	s := d.of(fi.DS)
	fi.DS = s.ds
	t.info, t.index = fi, s.index
}

// template returns the file's data source names, in the file's order.
func (t *fileState) template() []string {
	names := make([]string, len(t.info.DS))
	for i, ds := range t.info.DS {
		names[i] = ds.Name
	}
	return names
}

// fileOf returns the state of the RRD file of (hash, key), creating it.
func (w *Writer) fileOf(hash uint64, key string) *fileState {
	w.filesMu.Lock()
	defer w.filesMu.Unlock()
	t := w.files[hash]
	if t == nil {
		t = &fileState{key: key}
		w.files[hash] = t
	}
	return t
}

// LockFile takes the per-file lock of key's RRD file, the one every
// update, create and graph of the file holds, and returns the file's path
// and the function that releases the lock. The caller may call librrd on
// the file until it releases it, and must not call the writer's methods
// that write key (FlushKey, FlushAll) meanwhile.
func (w *Writer) LockFile(key string) (path string, unlock func()) {
	t := w.fileOf(spool.KeyHash(key), key)
	t.mu.Lock()
	return w.path(t), t.mu.Unlock
}

// FileReplaced tells the writer that the caller replaced key's RRD file
// while it held the file's lock (LockFile): the writer reads the new
// file's header before it next writes it.
func (w *Writer) FileReplaced(key string) {
	w.fileOf(spool.KeyHash(key), key).forget()
}

// TargetError is the last failure of a target that has not been written
// successfully since.
type TargetError struct {
	Key      string    `json:"target"`
	Path     string    `json:"path"`
	Kind     ErrorKind `json:"kind"`
	Err      string    `json:"error"`
	At       time.Time `json:"at"`       // when it last failed
	Failures int       `json:"failures"` // consecutive failures
	RetryAt  time.Time `json:"retry_at"` // TakeDue skips the target until then
}

// writeError is an error with its kind decided.
type writeError struct {
	kind ErrorKind
	err  error
}

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

func kindError(k ErrorKind, err error) error { return &writeError{kind: k, err: err} }

// kindOf returns the kind of a write error.
func kindOf(err error) ErrorKind {
	var we *writeError
	if errors.As(err, &we) {
		return we.kind
	}
	return classify(err)
}

// fail records err as the target's last error, counts it and returns when
// the target may be retried (exponential backoff).
func (w *Writer) fail(hash uint64, key, path string, err error) time.Time {
	kind := kindOf(err)
	now := w.o.Now()
	w.c.errors[kind].Add(1)
	w.c.backoffs.Add(1)
	var te TargetError
	w.own(func(tb *table) {
		te = tb.errs[hash]
		te.Failures++
		te.Key, te.Path, te.Kind, te.Err, te.At = key, path, kind, err.Error(), now
		te.RetryAt = now.Add(w.backoff(te.Failures))
		tb.errs[hash] = te
	})
	w.log.Warn("rrd write failed; target backs off", "key", key, "path", path, "kind", kind.String(),
		"failures", te.Failures, "retry_at", te.RetryAt, "err", err)
	return te.RetryAt
}

// flag records err, a problem of a write that succeeded (KindStale), as
// the target's last error, without a backoff.
func (w *Writer) flag(hash uint64, key, path string, err error) {
	now := w.o.Now()
	w.c.errors[KindStale].Add(1)
	w.own(func(tb *table) {
		tb.errs[hash] = TargetError{Key: key, Path: path, Kind: KindStale, Err: err.Error(), At: now, Failures: 1}
	})
	w.log.Warn("rrd written, but entries older than its last update were quarantined; check the clock", "key", key, "path", path, "err", err)
}

// succeed clears the target's last error.
func (w *Writer) succeed(hash uint64) {
	w.own(func(tb *table) { delete(tb.errs, hash) })
}

// backoff returns BackoffMin × 2^(failures-1), capped at BackoffMax.
func (w *Writer) backoff(failures int) time.Duration {
	d := w.o.BackoffMin
	for i := 1; i < failures && d < w.o.BackoffMax; i++ {
		d *= 2
	}
	return min(d, w.o.BackoffMax)
}

// TargetErrors returns the last error of every target failing now, by key.
// A target's entry disappears when it is written successfully.
func (w *Writer) TargetErrors() []TargetError {
	var out []TargetError
	w.own(func(tb *table) { out = slices.Collect(maps.Values(tb.errs)) })
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// checkProfile reports a KindMismatch error when the target has a profile
// whose data source names differ from those of t's file, path. It runs before every
// update, so the names are looked up in the file's index (names are unique
// in both): the sorted lists are made only for the error.
func (w *Writer) checkProfile(t *fileState, path string) error {
	p, ok := w.o.Layout(t.key)
	if !ok {
		return nil
	}
	same := len(p.DS) == len(t.info.DS)
	for i := 0; same && i < len(p.DS); i++ {
		_, same = t.index[p.DS[i].Name]
	}
	if same {
		return nil
	}
	want, have := p.DSNames(), t.template()
	slices.Sort(want)
	slices.Sort(have)
	if !slices.Equal(want, have) {
		return kindError(KindMismatch, fmt.Errorf("check rrd %s: data sources %v differ from profile %v; move the file away or fix the profile", path, have, want))
	}
	return nil
}

// noProfileError is the error of a key without a profile whose file is
// missing; for a protocol key it says that the file must be made first.
func noProfileError(t *fileState, path string) error {
	if file, ok := rrd.ProtocolFile(t.key); ok {
		return fmt.Errorf("write rrd %s: the file is missing; the updates of %s came over the rrdcached protocol, which gives no profile to create it: they stay in the spool until the file exists (CREATE it)", path, file)
	}
	return fmt.Errorf("create rrd %s: no profile for %q", path, t.key)
}
