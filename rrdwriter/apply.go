package rrdwriter

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

// apply writes one batch taken from the index and ends it with Done: the
// settled times (applied, already applied, vanished or quarantined) leave
// the index, the others go back to pending, with a backoff on failure.
func (w *Writer) apply(b shm.Batch) error {
	defer w.finish(b.Hash)
	settled, key, path, err := w.write(b)
	var retryAt time.Time
	if err != nil {
		retryAt = w.fail(b.Hash, key, path, err)
	} else if key != "" {
		w.succeed(b.Hash)
	}
	w.ix.Done(b.Hash, settled, retryAt)
	return err
}

// entryStore reads and removes spool entries: the spool, or the level
// directory of the batch's hash (one openat or unlinkat per entry).
type entryStore interface {
	Read(spool.Ref) (spool.Entry, error)
	Remove(spool.Ref) error
}

// write reads the batch's entries and applies them under the file's lock.
func (w *Writer) write(b shm.Batch) (settled []int64, key, path string, err error) {
	var st entryStore = w.sp
	if d, err := w.sp.OpenDir(b.Hash); err == nil {
		defer d.Close()
		st = d
	}
	entries, settled, readErr := w.readBatch(st, &b)
	if len(entries) == 0 {
		return settled, b.Key, "", readErr
	}
	t := w.target(b.Hash, b.Key)
	t.mu.Lock()
	defer t.mu.Unlock()
	settled, err = w.writeEntries(t, st, entries, settled)
	if err == nil {
		err = readErr
	}
	return settled, t.key, t.path, err
}

// readBatch reads the batch's entries in time order. A vanished entry was
// settled before; a corrupt one is quarantined; both are settled. It stops
// at the first entry it cannot read for another reason, so no later value
// is applied before it (that would make it look already applied).
func (w *Writer) readBatch(st entryStore, b *shm.Batch) (entries []spool.Entry, settled []int64, err error) {
	for _, ts := range b.Times {
		ref := spool.Ref{Hash: b.Hash, Time: ts}
		e, rerr := st.Read(ref)
		var ce *spool.CorruptionError
		switch {
		case rerr == nil && b.Key != "" && e.Key != b.Key:
			rerr = fmt.Errorf("read spool entry %s: key %q, index has %q (hash collision)", ref, e.Key, b.Key)
			if qerr := w.quarantine(ref, rerr.Error()); qerr != nil {
				return entries, settled, kindError(KindSpoolRead, qerr)
			}
		case rerr == nil:
			w.learnKey(b, e.Key)
			entries = append(entries, e)
			continue
		case errors.Is(rerr, fs.ErrNotExist):
			w.c.vanished.Add(1)
		case errors.As(rerr, &ce):
			if qerr := w.quarantine(ref, rerr.Error()); qerr != nil {
				return entries, settled, kindError(KindSpoolRead, qerr)
			}
		default:
			return entries, settled, kindError(KindSpoolRead, rerr)
		}
		settled = append(settled, ts)
	}
	return entries, settled, nil
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

func (w *Writer) quarantine(ref spool.Ref, reason string) error {
	if _, err := w.sp.Quarantine(w.sp.EntryPath(ref), reason); err != nil {
		return err
	}
	w.c.quarantined.Add(1)
	return nil
}

// writeEntries applies entries (ascending) to t's file; t.mu is held.
func (w *Writer) writeEntries(t *target, st entryStore, entries []spool.Entry, settled []int64) ([]int64, error) {
	if err := w.ensureFile(t, entries[0].Time, entries[len(entries)-1].Time); err != nil {
		return settled, err
	}
	if err := w.checkProfile(t); err != nil {
		return settled, err
	}
	if err := checkNames(t, entries); err != nil {
		return settled, err
	}
	n := splitApplied(entries, t.info.Last)
	w.c.skipped.Add(uint64(n))
	settled = w.settle(t, st, entries[:n], settled)
	entries = entries[n:]
	for attempt := 0; len(entries) > 0; attempt++ {
		if attempt == w.o.MaxRetries {
			return settled, kindError(KindValue, fmt.Errorf("update rrd %s: gave up after %d rejected rows", t.path, attempt))
		}
		var err error
		if entries, settled, err = w.update(t, st, entries, settled); err != nil {
			return settled, err
		}
	}
	return settled, nil
}

// update makes one update call with all entries and handles its failure;
// it returns the entries still to apply.
func (w *Writer) update(t *target, st entryStore, entries []spool.Entry, settled []int64) ([]spool.Entry, []int64, error) {
	w.c.updateCalls.Add(1)
	if until := entries[len(entries)-1].Time; w.o.Prefetch && t.prefetchedUntil.Load() < until {
		w.prefetch(t, until)
	}
	uerr := w.o.RRD.Update(t.path, t.template(), buildRows(t, entries))
	if uerr == nil {
		t.info.Last = entries[len(entries)-1].Time
		w.c.written(entries)
		return nil, w.settle(t, st, entries, settled), nil
	}
	kind := classify(uerr)
	fi, ierr := w.o.RRD.Info(t.path)
	if ierr != nil {
		t.known = false
		if kind == KindValue || kind == KindOther {
			kind = KindCorrupt
		}
		return entries, settled, kindError(kind, fmt.Errorf("%w; then %w", uerr, ierr))
	}
	t.setInfo(fi)
	n := splitApplied(entries, fi.Last)
	w.c.written(entries[:n])
	settled = w.settle(t, st, entries[:n], settled)
	entries = entries[n:]
	if kind != KindValue {
		return entries, settled, kindError(kind, uerr)
	}
	if len(entries) > 0 && !strings.Contains(uerr.Error(), illegalTime) {
		// librrd stopped at the first row after its last update.
		bad := entries[0]
		if err := w.quarantine(bad.Ref(), uerr.Error()); err != nil {
			return entries, settled, kindError(KindSpoolRead, err)
		}
		w.log.Warn("librrd rejected a spool entry; quarantined", "key", t.key, "time", bad.Time, "err", uerr)
		settled = append(settled, bad.Time)
		entries = entries[1:]
	}
	return entries, settled, nil
}

// settle removes the entries (their values are in t's RRD file), once the
// file is durable as Options.RRDFsync asks, and appends their times to
// settled.
func (w *Writer) settle(t *target, st entryStore, entries []spool.Entry, settled []int64) []int64 {
	for i := range entries {
		settled = append(settled, entries[i].Time)
	}
	switch {
	case len(entries) == 0:
		return settled
	case w.o.RRDFsync == spool.FsyncBatch:
		w.rm.add(entries)
		return settled
	case w.o.RRDFsync == spool.FsyncAlways:
		w.c.rrdSyncs.Add(1)
		if err := syncFile(t.path); err != nil {
			// Kept on disk: a rescan indexes them again, and the writer
			// skips them as applied and syncs again.
			w.c.rrdSyncErrors.Add(1)
			w.log.Error("applied spool entries kept", "key", t.key, "entries", len(entries), "err", err)
			return settled
		}
	}
	for i := range entries {
		if err := st.Remove(entries[i].Ref()); err != nil {
			w.c.removeErrors.Add(1)
			w.log.Warn("remove applied spool entry", "err", err)
		}
	}
	return settled
}

// splitApplied returns how many of the ascending entries are at or before
// last: they are already in the file.
func splitApplied(entries []spool.Entry, last int64) int {
	n := 0
	for n < len(entries) && entries[n].Time <= last {
		n++
	}
	return n
}

// ensureFile loads the file's info once, or creates the file from the
// target's profile, accepting updates after first-1. With Prefetch, the
// header read that gives the info also starts reading the pages an update
// up to until touches.
func (w *Writer) ensureFile(t *target, first, until int64) error {
	if t.known {
		return nil
	}
	if w.o.Prefetch {
		if fi, ok := w.prefetch(t, until); ok {
			t.setInfo(fi)
			return nil
		}
	}
	fi, err := w.o.RRD.Info(t.path)
	if err == nil {
		t.setInfo(fi)
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return kindError(orCorrupt(classify(err)), err)
	}
	p, ok := w.o.Profile(t.key)
	if !ok {
		return kindError(KindNoProfile, fmt.Errorf("create rrd %s: no profile for %q", t.path, t.key))
	}
	if err := p.Validate(); err != nil {
		return kindError(KindNoProfile, fmt.Errorf("create rrd %s: %w", t.path, err))
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o750); err != nil {
		return kindError(classify(err), fmt.Errorf("create rrd directory: %w", err))
	}
	if err := w.o.RRD.Create(t.path, p, first-1); err != nil {
		return kindError(classify(err), err)
	}
	w.c.creates.Add(1)
	fi = FileInfo{Last: first - 1, Step: p.Step}
	for _, ds := range p.DS {
		fi.DS = append(fi.DS, DSInfo{Name: ds.Name, Type: ds.Type})
	}
	t.setInfo(fi)
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
func checkNames(t *target, entries []spool.Entry) error {
	for i := range entries {
		for _, v := range entries[i].Values {
			if _, ok := t.index[v.Name]; !ok {
				return kindError(KindMismatch, fmt.Errorf("check rrd %s: entry at %d has data source %q the file does not have", t.path, entries[i].Time, v.Name))
			}
		}
	}
	return nil
}

// buildRows formats one row per entry, one value per data source of the
// file: "U" where the entry has none or an Unknown, and for COUNTER and
// DERIVE data sources of an entry marked FlagDiscontinuity (the counters
// restarted: a rate against the previous value would be a spike).
func buildRows(t *target, entries []spool.Entry) []Row {
	rows := make([]Row, len(entries))
	vals := make([]string, len(entries)*len(t.info.DS))
	for i := range vals {
		vals[i] = "U"
	}
	for i := range entries {
		e := &entries[i]
		row := vals[i*len(t.info.DS) : (i+1)*len(t.info.DS)]
		disc := e.Flags&spool.FlagDiscontinuity != 0
		for _, v := range e.Values {
			j := t.index[v.Name]
			if disc && t.info.DS[j].Type.isRate() {
				continue
			}
			row[j] = formatValue(v)
		}
		rows[i] = Row{Time: e.Time, Milli: e.Milli, Values: row}
	}
	return rows
}

// formatValue formats a counter exactly as an unsigned integer and a gauge
// as its shortest exact decimal.
func formatValue(v spool.Value) string {
	switch v.Type {
	case spool.Counter:
		return strconv.FormatUint(v.Counter, 10)
	case spool.Gauge:
		return formatFloat(v.Gauge)
	}
	return "U"
}
