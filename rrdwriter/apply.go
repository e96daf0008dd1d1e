package rrdwriter

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

// apply writes one batch taken from the index and ends it with Done: the
// settled times (applied, already applied, vanished or quarantined) leave
// the index, the others go back to pending, with a backoff on failure.
// The applied segments go to the removal stage, and the batch ends (Done,
// end) once its file is durable as the policy asks and they are removed:
// until then the key stays in flight, so no pass reads a segment that is
// applied but still on disk, whoever indexed it again (removal.go).
func (w *Writer) apply(b shm.Batch) error {
	settled, unlink, key, path, err := w.write(b)
	var retryAt time.Time
	switch {
	case err != nil && kindOf(err) == KindStale:
		w.flag(b.Hash, key, path, err) // written; shown, no backoff
		err = nil
	case err != nil:
		retryAt = w.fail(b.Hash, key, path, err)
	case key != "":
		w.succeed(b.Hash)
	}
	w.rq.add(unlink, path, func() {
		w.end(b.Hash, func() {
			w.ix.Done(b.Hash, settled, retryAt)
			w.sp.Unseal(b.Hash) // after Done: a segment named as one of b's now is indexed as new
		})
	})
	return err
}

// segmentStore reads and removes spool segments: the spool (each read
// resolves the segment's name beneath the spool directory), or the level
// directory of the batch's hash (one openat or unlinkat per segment).
type segmentStore interface {
	ReadSegmentInto(spool.Ref, *spool.SegmentBuffer) (spool.Segment, error)
	Remove(spool.Ref) error
}

// write reads the batch's segments and applies their entries under the
// file's lock. The key's open segment is sealed first, so every entry of
// the segments read is in them, and the batch's names are kept from new
// segments of the key until the batch ends (apply): a poll appended after
// the removal of an applied segment starts a segment of its own name,
// which the index then adds as new, and which no pass of this batch reads.
func (w *Writer) write(b shm.Batch) (settled []int64, unlink []spool.Ref, key, path string, err error) {
	w.sp.SealNames(b.Hash, b.Times)
	// Several segments are read beneath their level directory, an openat
	// each; a single one by its name beneath the spool directory: the
	// level directory's open and close would cost more than the shorter
	// walk saves.
	var st segmentStore = w.sp
	if len(b.Times) > 1 {
		if d, err := w.sp.OpenDir(b.Hash); err == nil {
			defer d.Close()
			st = d
		}
	}
	// The segments' entries and values are decoded into a buffer of an
	// earlier pass: nothing of them outlives this one (buildRows copies
	// the values into the rows).
	buf := w.segBufs.Get().(*spool.SegmentBuffer)
	defer func() { buf.Reset(); w.segBufs.Put(buf) }()
	p := &pass{w: w, st: st, buf: buf}
	defer func() { p.trace(b.Key, err) }() // before buf is reset
	if err := p.read(&b); err != nil {
		return p.settled, p.unlink, b.Key, "", err
	}
	p.check(b.Key, w.o.Now())
	if len(p.items) == 0 {
		err := p.finish()
		return p.settled, p.unlink, b.Key, "", err
	}
	t := w.fileOf(b.Hash, b.Key)
	t.mu.Lock()
	defer t.mu.Unlock()
	err = w.writeItems(t, p)
	return p.settled, p.unlink, t.key, p.path, err
}

// pass is the work on one batch: the segments read, their good entries in
// time order (items), and what of them goes to the quarantine.
type pass struct {
	w       *Writer
	t       *fileState // the file, once locked; nil if nothing is applied
	path    string     // t's path, made once a pass
	st      segmentStore
	buf     *spool.SegmentBuffer // the segs' memory
	segs    []spool.Segment
	items   []item // the entries to apply, by poll time
	bad     []badPart
	settled []int64     // batch times done with (removed or quarantined)
	unlink  []spool.Ref // applied segments for the removal queue
	stale   int         // entries quarantined as older than the file's last update
	// applied and skipped count the entries written and those found
	// already applied (trace).
	applied, skipped int
	vanished         []int64 // batch times whose segment was gone
}

// item is one good entry of a segment.
type item struct {
	e   *spool.Entry
	seg int
	off int64
}

// badPart is a range of a segment to quarantine before the segment goes.
type badPart struct {
	seg int
	r   spool.BadRange
}

// read reads the batch's segments. A vanished segment was settled before;
// one that can never be read is quarantined whole; both are settled. Any
// other read failure ends the pass with nothing applied: an entry left
// unread could be older than one applied.
func (p *pass) read(b *shm.Batch) error {
	for _, ts := range b.Times {
		ref := spool.Ref{Hash: b.Hash, Time: ts}
		g, err := p.st.ReadSegmentInto(ref, p.buf)
		var ce *spool.CorruptionError
		switch {
		case err == nil:
			p.segs = append(p.segs, g)
			if b.Key == "" && len(g.Entries) > 0 {
				p.w.learnKey(b, g.Entries[0].Key)
			}
			continue
		case errors.Is(err, fs.ErrNotExist):
			p.w.c.vanished.Add(1)
			p.vanished = append(p.vanished, ts)
		case errors.As(err, &ce):
			if qerr := p.w.quarantineFile(ref, err.Error()); qerr != nil {
				return kindError(KindSpoolRead, qerr)
			}
		default:
			return kindError(KindSpoolRead, err)
		}
		p.settled = append(p.settled, ts)
	}
	return nil
}

// check sorts the good entries by poll time and sets aside what must not be
// applied: entries of another key (a hash collision), a second entry of one
// second, and entries dated further ahead of now than FutureTolerance.
func (p *pass) check(key string, now time.Time) {
	for i := range p.segs {
		g := &p.segs[i]
		for _, r := range g.Bad {
			p.bad = append(p.bad, badPart{i, r})
		}
		for j := range g.Entries {
			p.items = append(p.items, item{e: &g.Entries[j], seg: i, off: g.Offsets[j]})
		}
	}
	slices.SortStableFunc(p.items, func(a, b item) int {
		return a.e.PollTime().Compare(b.e.PollTime())
	})
	future := now.Add(p.w.o.FutureTolerance).Unix()
	kept := p.items[:0]
	for i, it := range p.items {
		var reason string
		switch {
		case key != "" && it.e.Key != key:
			reason = fmt.Sprintf("entry of key %q, the index has %q for its hash (a hash collision)", it.e.Key, key)
		case i > 0 && it.e.PollTime() == p.items[i-1].e.PollTime():
			reason = fmt.Sprintf("a second entry of poll time %d.%03d: the first was applied", it.e.Time, it.e.Milli)
		case it.e.Time > future:
			reason = fmt.Sprintf("dated %d, %s ahead of the clock (at most %s, --future-tolerance)", it.e.Time, time.Unix(it.e.Time, 0).Sub(now).Round(time.Second), p.w.o.FutureTolerance)
			p.w.c.future.Add(1)
		default:
			kept = append(kept, it)
			continue
		}
		p.setAside(it, reason)
	}
	p.items = kept
}

// setAside moves an entry to the ranges to quarantine.
func (p *pass) setAside(it item, reason string) {
	p.bad = append(p.bad, badPart{it.seg, spool.BadRange{Offset: it.off, Len: int64(it.e.EncodedLen()), Reason: reason}})
}

// quarantineBad copies every bad range to the quarantine. It runs before
// anything is applied, so a failure leaves the batch as it was.
func (p *pass) quarantineBad() error {
	for _, b := range p.bad {
		g := &p.segs[b.seg]
		if len(g.Entries) == 0 {
			continue // nothing good in it: finish moves the whole file
		}
		if _, err := p.w.sp.QuarantineRange(g, b.r); err != nil {
			return kindError(KindSpoolRead, err)
		}
		p.w.c.quarantined.Add(1)
	}
	p.bad = p.bad[:0]
	return nil
}

// finish removes (or, holding nothing good, quarantines whole) every
// segment whose entries are all applied or set aside, in the order of
// their newest entries, and stops at the first that is not: entries stay
// only in the segments whose newest entries are the newest, so what a crash
// leaves behind ends with the newest applied entry (see splitApplied).
// Names do not give that order: a segment named a second early (its own
// second was taken) can hold a newer entry than the next one's.
// pending[i] counts the entries of segment i still to apply; nil means
// none.
func (p *pass) finish(pending ...int) error {
	if err := p.quarantineBad(); err != nil {
		return err
	}
	var done []spool.Ref
	for _, i := range p.byNewest() {
		g := &p.segs[i]
		if pending != nil && pending[i] > 0 {
			break
		}
		if len(g.Entries) == 0 { // ParseSegment gives it a bad range
			if err := p.w.quarantineFile(g.Ref, g.Bad[0].Reason); err != nil {
				return kindError(KindSpoolRead, err)
			}
			p.settled = append(p.settled, g.Ref.Time)
			continue
		}
		done = append(done, g.Ref)
	}
	p.remove(done)
	return nil
}

// byNewest returns the indexes of the segments ordered by their newest
// entry (poll time to the millisecond), segments without entries first.
func (p *pass) byNewest() []int {
	newest := make([]spool.PollTime, len(p.segs))
	order := make([]int, len(p.segs))
	for i := range p.segs {
		order[i] = i
		newest[i] = spool.PollTime{Sec: -1}
		for _, e := range p.segs[i].Entries {
			if t := e.PollTime(); t.Compare(newest[i]) > 0 {
				newest[i] = t
			}
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return newest[a].Compare(newest[b])
	})
	return order
}

func (w *Writer) learnKey(b *shm.Batch, key string) {
	if b.Key != "" {
		return
	}
	b.Key = key
	if err := w.ix.SetKey(b.Hash, key); err != nil {
		w.log.Warn("learn key of spool entries", "key", key, "err", err)
	}
}

func (w *Writer) quarantineFile(ref spool.Ref, reason string) error {
	if _, err := w.sp.Quarantine(ref, reason); err != nil {
		return err
	}
	w.c.quarantined.Add(1)
	return nil
}

// writeItems applies the pass's entries to t's file; t.mu is held.
func (w *Writer) writeItems(t *fileState, p *pass) error {
	p.t, p.path = t, w.path(t)
	todo, pending, err := w.firstUpdate(t, p)
	if pending == nil {
		return err // not planned: nothing applied
	}
	for attempt := 1; len(todo) > 0 && err == nil; attempt++ {
		if attempt == w.o.MaxRetries {
			err = kindError(KindValue, fmt.Errorf("update rrd %s: gave up after %d rejected rows", p.path, attempt))
			break
		}
		todo, err = w.update(t, p, todo, pending)
	}
	if ferr := p.finish(pending...); err == nil {
		err = ferr
	}
	if err == nil && p.stale > 0 {
		err = kindError(KindStale, fmt.Errorf("write rrd %s: %d entries older than its last update quarantined; check the clock", p.path, p.stale))
	}
	return err
}

// firstUpdate plans the pass's entries from the file's info and makes
// the first update call. It returns the entries still to apply, how many
// of each segment's entries are still to apply (nil if the entries could
// not be planned: nothing was applied, and err says why) and the update's
// error. A file the writer does not know yet (no info since the start,
// none read ahead) has its info read by the update itself where the RRD
// can (InfoUpdater), and the entries planned there, under the update's
// lock: one open and one read of the header instead of two of each.
func (w *Writer) firstUpdate(t *fileState, p *pass) (todo []item, pending []int, err error) {
	items := p.items
	until := items[len(items)-1].e.Time
	if fu, ok := w.o.RRD.(InfoUpdater); ok && !t.known() && t.ahead.Load() == nil {
		last := int64(-1)
		rs := w.rowBufs.Get().(*rowScratch)
		planned, uerr := fu.UpdateFor(p.path, func(fi rrd.FileInfo) []rrd.Sample {
			t.setInfo(fi, &w.dsSets)
			last = fi.Last
			if todo, pending, err = w.plan(t, p); err != nil || len(todo) == 0 {
				return nil
			}
			w.c.updateCalls.Add(1)
			return buildRows(t, todo, rs)
		}, w.opened(t, p, until, -1))
		clear(rs.vals) // the values' string is garbage now
		w.rowBufs.Put(rs)
		switch {
		case !planned:
			// Missing, unreadable or not native: the info is read, or
			// the file created, the usual way (ensureFile), which says
			// what is wrong, if anything.
		case err != nil || len(todo) == 0:
			return nil, pending, err
		default:
			todo, err = w.updated(t, p, todo, pending, last, uerr)
			return todo, pending, err
		}
	}
	if err := w.ensureFile(t, p.path, items[0].e.Time, until); err != nil {
		return nil, nil, err
	}
	if todo, pending, err = w.plan(t, p); err != nil || len(todo) == 0 {
		return nil, pending, err
	}
	todo, err = w.update(t, p, todo, pending)
	return todo, pending, err
}

// plan checks t's file's info against its profile and the pass's
// entries' data sources, sets aside the entries at or before its last
// update (splitApplied) and quarantines what is set aside. It returns
// the entries to apply and how many of each segment's they are; an error
// means nothing may be applied (pending nil).
func (w *Writer) plan(t *fileState, p *pass) (todo []item, pending []int, err error) {
	if err := w.checkProfile(t, p.path); err != nil {
		return nil, nil, err
	}
	if err := checkNames(t, p.path, p.items); err != nil {
		return nil, nil, err
	}
	n := w.splitApplied(t, p)
	if err := p.quarantineBad(); err != nil {
		return nil, nil, err
	}
	pending = make([]int, len(p.segs))
	for _, it := range p.items[n:] {
		pending[it.seg]++
	}
	return p.items[n:], pending, nil
}

// splitApplied returns how many of the items are at or before the file's
// last update. They are already in the file if the newest of them is at
// the last update itself: what a crash between an update and the removal
// of its segments leaves behind. Otherwise they were never applied (the
// clock stepped back, or an entry was dated ahead and applied first):
// they are set aside for the quarantine, never dropped, and the target is
// flagged.
func (w *Writer) splitApplied(t *fileState, p *pass) int {
	n := 0
	for n < len(p.items) && covers(&t.info, p.items[n].e) {
		n++
	}
	if n == 0 {
		return 0
	}
	if isLast(&t.info, p.items[n-1].e) {
		w.c.skipped.Add(uint64(n))
		p.skipped += n
		return n
	}
	w.setAsideStale(t, p, p.items[:n])
	return n
}

// setAsideStale sets items aside for the quarantine as never applied:
// they are at or before the file's last update, which is none of them.
func (w *Writer) setAsideStale(t *fileState, p *pass, items []item) {
	for _, it := range items {
		p.setAside(it, fmt.Sprintf("poll time %d is before the RRD file's last update %d and was never applied (the clock stepped back, or a later entry was dated ahead)", it.e.Time, t.info.Last))
	}
	p.stale += len(items)
	w.c.stale.Add(uint64(len(items)))
}

// update makes one update call with todo and handles its failure; it
// returns the entries still to apply and counts applied ones out of
// pending.
func (w *Writer) update(t *fileState, p *pass, todo []item, pending []int) ([]item, error) {
	w.c.updateCalls.Add(1)
	until, last := todo[len(todo)-1].e.Time, t.info.Last
	// The rows are in the file's data source order (buildRows), so no
	// template: librrd takes the values by position, as rrdcached sends
	// them, instead of matching every name of the template per call.
	rs := w.rowBufs.Get().(*rowScratch)
	uerr := w.o.RRD.Update(p.path, nil, buildRows(t, todo, rs), w.opened(t, p, until, last))
	clear(rs.vals) // the values' string is garbage now
	w.rowBufs.Put(rs)
	return w.updated(t, p, todo, pending, last, uerr)
}

// opened is the prefetch of the pass's update up to until of t's file,
// whose last update the writer knows as last (-1: not known), on the
// update's own descriptor: no open of the file for it alone. None (nil:
// the update gives the hint against read-ahead itself) if the writer
// does not prefetch or the read-ahead asked for the rows up to until;
// cachedFile if the read-ahead found the file's header cached for this
// pass's batch (its newest segment's time: the batch's newest time,
// which the update's until, its newest entry's, passes).
func (w *Writer) opened(t *fileState, p *pass, until, last int64) func(fd int) {
	switch {
	case !w.o.Prefetch:
		return nil
	case t.cachedAt.Load() == p.newestSegment():
		return cachedFile
	case t.prefetchedUntil.Load() >= until:
		return nil
	}
	return func(fd int) { w.prefetch(t, p.path, fd, until, last, false) }
}

// cachedFile is the opened of an update of a file found in the page
// cache just before: nothing to ask for, no hint to give.
func cachedFile(int) {}

// newestSegment returns the newest time of the pass's segments' names.
func (p *pass) newestSegment() int64 {
	n := int64(-1)
	for i := range p.segs {
		n = max(n, p.segs[i].Ref.Time)
	}
	return n
}

// updated handles the outcome uerr of an update call with todo, made on
// a file whose last update was last: it returns the entries still to
// apply and counts applied ones out of pending.
func (w *Writer) updated(t *fileState, p *pass, todo []item, pending []int, last int64, uerr error) ([]item, error) {
	until := todo[len(todo)-1].e.Time
	if uerr == nil {
		t.info.Last, t.info.LastMilli = until, todo[len(todo)-1].e.Milli
		t.advanceGeometry(last, until)
		w.c.written(todo)
		p.applied += len(todo)
		markApplied(todo, pending)
		return nil, nil
	}
	t.geometry.Store(nil) // some rows may have landed: read it again
	kind := classify(uerr)
	fi, ierr := w.o.RRD.Info(p.path)
	if ierr != nil {
		t.forget()
		t.ahead.Store(nil)
		if ik := classify(ierr); ik == KindRemote {
			kind = ik // the peer is gone: nothing is known of the file
		} else if kind == KindValue || kind == KindOther {
			kind = KindCorrupt
		}
		return todo, kindError(kind, fmt.Errorf("%w; then %w", uerr, ierr))
	}
	t.setInfo(fi, &w.dsSets)
	n := 0
	for n < len(todo) && covers(&fi, todo[n].e) {
		n++
	}
	if n > 0 && !isLast(&fi, todo[n-1].e) {
		// The file's last update is after these rows and none of them
		// (another client's update ahead, on a forward peer): they never
		// landed and never can. Quarantined, as splitApplied does.
		w.setAsideStale(t, p, todo[:n])
		markApplied(todo[:n], pending)
		if todo, n = todo[n:], 0; len(todo) == 0 {
			return nil, nil
		}
	}
	w.c.written(todo[:n])
	p.applied += n
	markApplied(todo[:n], pending)
	todo = todo[n:]
	if kind != KindValue {
		return todo, kindError(kind, uerr)
	}
	if len(todo) > 0 && !strings.Contains(uerr.Error(), illegalTime) {
		// librrd stopped at the first row after its last update.
		bad := todo[0]
		p.setAside(bad, uerr.Error())
		if err := p.quarantineBad(); err != nil {
			return todo, err
		}
		w.log.Warn("librrd rejected a spool entry; quarantined", "key", t.key, "time", bad.e.Time, "err", uerr)
		markApplied(todo[:1], pending)
		todo = todo[1:]
	}
	return todo, nil
}

func markApplied(items []item, pending []int) {
	for _, it := range items {
		pending[it.seg]--
	}
}

// remove settles the segments done (their values are in the pass's file,
// or nothing of them was applied when p.t is nil) and hands them to the
// removal stage (p.unlink), which makes the file durable as
// Options.RRDFsync asks before it removes them (removal.go).
func (p *pass) remove(done []spool.Ref) {
	for _, r := range done {
		p.settled = append(p.settled, r.Time)
	}
	p.unlink = append(p.unlink, done...)
}

// ensureFile loads the info of t's file, path, once, or creates the file
// from the target's profile, accepting updates after first-1. With Prefetch, the
// header read that gives the info also starts reading the pages an update
// up to until touches.
func (w *Writer) ensureFile(t *fileState, path string, first, until int64) error {
	if t.known() {
		// A header a read-ahead read for the geometry (a file created
		// or tuned since) is not needed: not kept for each file.
		t.ahead.Store(nil)
		return nil
	}
	if fi := t.ahead.Swap(nil); fi != nil {
		// Read by the flush's read-ahead just before; update asks for
		// the rows it did not.
		t.setInfo(*fi, &w.dsSets)
		return nil
	}
	if w.o.Prefetch {
		if fi, ok := w.prefetch(t, path, -1, until, -1, true); ok {
			t.ahead.Store(nil)
			t.setInfo(fi, &w.dsSets)
			return nil
		}
	}
	fi, err := w.o.RRD.Info(path)
	if err == nil {
		t.setInfo(fi, &w.dsSets)
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return kindError(orCorrupt(classify(err)), err)
	}
	p, ok := w.o.Layout(t.key)
	if !ok {
		return kindError(KindNoProfile, noProfileError(t, path))
	}
	if err := p.Validate(); err != nil {
		return kindError(KindNoProfile, fmt.Errorf("create rrd %s: %w", path, err))
	}
	if err := w.o.RRD.Create(path, p, first-1); err != nil {
		return kindError(classify(err), err)
	}
	w.c.creates.Add(1)
	fi = rrd.FileInfo{Last: first - 1, Step: p.Step}
	for _, ds := range p.DS {
		fi.DS = append(fi.DS, rrd.DSInfo{Name: ds.Name, Type: ds.Type})
	}
	t.setInfo(fi, &w.dsSets)
	return nil
}

// orCorrupt maps a failure to read an existing file's header that is not
// a permission or space problem to KindCorrupt.
func orCorrupt(k ErrorKind) ErrorKind {
	if k == KindOther || k == KindValue {
		return KindCorrupt
	}
	return k
}

// checkNames reports a KindMismatch error if an entry has a value for a
// data source the file does not have: it cannot be stored, and dropping it
// silently would lose data.
func checkNames(t *fileState, path string, items []item) error {
	var o dsOrder
	for _, it := range items {
		if name, ok := o.of(t, it.e.Values); !ok {
			return kindError(KindMismatch, fmt.Errorf("check rrd %s: entry at %d has data source %q the file does not have", path, it.e.Time, name))
		}
	}
	return nil
}

// dsOrder is the positions in the file of an entry's values. A key's
// entries repeat the same names in the same order, decoded as the same
// strings (spool's arena and interner), so the positions of the previous
// entry's names are those of the next one's, found with a comparison of
// each name (equal pointers) instead of a map lookup.
type dsOrder struct {
	prev []spool.Value
	pos  []int
}

// of returns the position in t's file of each of vals' names; if a name
// is not a data source of the file, it returns that name and false.
func (o *dsOrder) of(t *fileState, vals []spool.Value) (string, bool) {
	if o.prev != nil && sameNames(vals, o.prev) {
		return "", true
	}
	o.prev, o.pos = nil, slices.Grow(o.pos[:0], len(vals))
	for _, v := range vals {
		j, ok := t.index[v.Name]
		if !ok {
			return v.Name, false
		}
		o.pos = append(o.pos, j)
	}
	o.prev = vals
	return "", true
}

func sameNames(a, b []spool.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}

// buildRows formats one row per entry, one value per data source of the
// file: "U" where the entry has none or an Unknown, and for COUNTER and
// DERIVE data sources of an entry marked FlagDiscontinuity (the counters
// restarted: a rate against the previous value would be a spike). Every
// value is formatted into one buffer and the rows' values are substrings
// of one string made of it; the rows and their value slices are rs's,
// reused pass after pass (the RRD's Update keeps none of them): one
// allocation for the batch once warm.
func buildRows(t *fileState, items []item, rs *rowScratch) []rrd.Sample {
	nds := len(t.info.DS)
	n := len(items) * nds
	rs.rows = slices.Grow(rs.rows[:0], len(items))[:len(items)]
	rs.vals = slices.Grow(rs.vals[:0], n)[:n]
	rs.span = slices.Grow(rs.span[:0], n)[:n] // each value's bytes in buf; empty: "U"
	clear(rs.span)
	buf := rs.buf[:0]
	var o dsOrder
	for i := range items {
		e := items[i].e
		disc := e.Flags&spool.FlagDiscontinuity != 0
		o.of(t, e.Values) // checkNames found every name
		for k, v := range e.Values {
			j := o.pos[k]
			if v.Type == spool.Unknown || disc && t.info.DS[j].Type.IsRate() {
				continue
			}
			from := int32(len(buf))
			buf = v.AppendText(buf)
			rs.span[i*nds+j] = [2]int32{from, int32(len(buf))}
		}
	}
	rs.buf = buf
	all := string(buf)
	for k, sp := range rs.span {
		if sp[0] == sp[1] {
			rs.vals[k] = "U"
			continue
		}
		rs.vals[k] = all[sp[0]:sp[1]]
	}
	for i := range items {
		rs.rows[i] = rrd.Sample{Time: items[i].e.Time, Milli: items[i].e.Milli, Values: rs.vals[i*nds : (i+1)*nds : (i+1)*nds]}
	}
	return rs.rows
}

// rowScratch is the memory of buildRows' rows, kept by the Writer between
// passes.
type rowScratch struct {
	rows []rrd.Sample
	vals []string
	span [][2]int32
	buf  []byte
}

// formatValue formats a value as an update takes it (spool.Value.AppendText).
func formatValue(v spool.Value) string { return string(v.AppendText(nil)) }
