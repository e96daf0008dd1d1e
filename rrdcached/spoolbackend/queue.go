package spoolbackend

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdcached"
	"github.com/spoold/spoold/spool"
)

// The protocol's commands on what is pending: FLUSH, FLUSHALL, PENDING,
// FORGET, QUEUE, STATS, SUSPEND and RESUME.

// Flush returns after every update of file spooled before the call is in
// the file (Writer.FlushKey). A poller target's file flushes the target
// (what `rrdtool graph --daemon` asks before it draws). flushed is false
// when the backend holds nothing for file (see holds); then a file that
// does not exist gives rrdcached.ErrNoSuchFile.
func (b *Backend) Flush(ctx context.Context, file string) (flushed bool, err error) {
	b.c.flushes.Add(1)
	if err := checkFileName(file); err != nil {
		return false, err
	}
	key, _ := b.keyOf(file)
	held, err := b.holds(ctx, file, key)
	if err != nil {
		return false, err
	}
	if !held {
		fd, err := b.root.Open(b.path(file), unix.O_PATH) // beneath the directory
		if err != nil {
			return false, fmt.Errorf("flush %s: %w", file, rrdcached.ErrNoSuchFile)
		}
		unix.Close(fd)
		return false, nil
	}
	if err := b.w.FlushKey(ctx, key); err != nil {
		return false, err
	}
	return true, nil
}

// holds reports whether the backend holds something of file (rrdcached:
// the file is in its cache tree): it was updated since the start and not
// forgotten since, or it has updates spooled, of this run or an earlier
// one (the key's leaf is walked first, so that a start-up walk that has
// not reached it yet does not hide them).
func (b *Backend) holds(ctx context.Context, file, key string) (bool, error) {
	b.mu.Lock()
	f := b.files[file]
	b.mu.Unlock()
	if f != nil && f.cached.Load() {
		return true, nil
	}
	hash := spool.KeyHash(key)
	if b.o.Ready != nil {
		if err := b.o.Ready.EnsureLeaf(ctx, hash); err != nil {
			return false, fmt.Errorf("walk the spool leaf of %s: %w", file, err)
		}
	}
	_, pending := b.ix.Peek(hash)
	return pending, nil
}

// FlushAll starts writing everything pending (Writer.StartFlushAll) and
// returns at once; the daemon's shutdown waits for it. Its failures are
// logged (and shown in the writer's TargetErrors).
func (b *Backend) FlushAll(context.Context) error {
	b.w.StartFlushAll(b.o.FlushContext, func(err error) {
		if err != nil {
			b.log.Warn("FLUSHALL: not everything was written; the rest stays in the spool", "err", err)
		}
	})
	return nil
}

// Pending returns the spooled updates of file not yet in it, oldest first,
// as "<seconds>[.<ms>]:v1:v2...", without removing them.
func (b *Backend) Pending(ctx context.Context, file string) ([]string, error) {
	if err := checkFileName(file); err != nil {
		return nil, err
	}
	key, _ := b.keyOf(file)
	if err := b.w.WaitKey(ctx, key); err != nil { // a FLUSH's segments may still be going
		return nil, fmt.Errorf("read pending updates of %s: %w", file, err)
	}
	entries, err := b.spooled(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("read pending updates of %s: %w", file, err)
	}
	out := make([]string, len(entries))
	for i := range entries {
		out[i] = formatUpdate(&entries[i])
	}
	return out, nil
}

// Forget is rrdcached's FORGET, which drops a file's cached updates:
// spoold keeps them (they were acknowledged) and reports how many stay
// pending; it forgets only what it knows of the file besides them. A file
// the backend holds nothing for gives rrdcached.ErrNotCached.
func (b *Backend) Forget(ctx context.Context, file string) (int, error) {
	b.c.forgets.Add(1)
	if err := checkFileName(file); err != nil {
		return 0, err
	}
	key, _ := b.keyOf(file)
	held, err := b.holds(ctx, file, key)
	if err != nil {
		return 0, err
	}
	if !held {
		return 0, fmt.Errorf("forget %s: %w", file, rrdcached.ErrNotCached)
	}
	pending, err := b.Pending(ctx, file)
	if err != nil {
		return 0, err
	}
	b.mu.Lock()
	if f := b.files[file]; f != nil {
		f.cached.Store(false)
	}
	b.mu.Unlock()
	return len(pending), nil
}

// Queue lists every file with pending updates (poller targets' too) and
// how many updates each has, by file name. It reads every pending segment:
// a command for an operator, not for a hot path. rrdcached lists only the
// files queued for writing.
func (b *Backend) Queue(context.Context) ([]rrdcached.Queued, error) {
	b.w.WaitRemovals() // a flushed file's segments are not pending
	counts := make(map[string]int)
	for _, pb := range b.ix.PeekKeys(func(string) bool { return true }) {
		entries, err := b.readSegments(pb.Hash, pb.Key, pb.Times)
		if err != nil {
			return nil, fmt.Errorf("read the queue: %w", err)
		}
		if len(entries) > 0 {
			counts[rrd.KeyPath(entries[0].Key)] += len(entries)
		}
	}
	out := make([]rrdcached.Queued, 0, len(counts))
	for file, n := range counts {
		out = append(out, rrdcached.Queued{File: file, Pending: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out, nil
}

// Stats returns rrdcached's STATS, name for name and in its order:
// QueueLength (files with pending updates), UpdatesReceived (UPDATE
// commands), FlushesReceived, UpdatesWritten (librrd update calls),
// DataSetsWritten (updates written), TreeNodesNumber (files updated since
// the start and not forgotten), TreeDepth (spoold's tree is the spool's:
// its levels of directories), JournalBytes (bytes appended to the spool)
// and JournalRotate (spool segments closed). The backend's other counters
// are metrics (NewCollector).
func (b *Backend) Stats() []rrdcached.StatsValue {
	s := b.BackendStats()
	return []rrdcached.StatsValue{
		{Name: "QueueLength", Value: s.QueueLength},
		{Name: "UpdatesReceived", Value: s.UpdatesReceived},
		{Name: "FlushesReceived", Value: s.FlushesReceived},
		{Name: "UpdatesWritten", Value: s.UpdatesWritten},
		{Name: "DataSetsWritten", Value: s.DataSetsWritten},
		{Name: "TreeNodesNumber", Value: s.Files},
		{Name: "TreeDepth", Value: uint64(b.sp.Levels().Depth())},
		{Name: "JournalBytes", Value: s.JournalBytes},
		{Name: "JournalRotate", Value: s.JournalRotate},
	}
}

// Suspend holds the writing of file (Writer.Hold); its updates are still
// spooled. changed is false when it was suspended already; a file the
// backend holds nothing for gives rrdcached.ErrNotCached.
func (b *Backend) Suspend(file string) (changed bool, err error) {
	key, err := b.heldKey(file)
	if err != nil {
		return false, err
	}
	return b.w.Hold(key), nil
}

// Resume releases a suspended file; changed is false when it was not
// suspended.
func (b *Backend) Resume(file string) (changed bool, err error) {
	key, err := b.heldKey(file)
	if err != nil {
		return false, err
	}
	return b.w.Release(key), nil
}

// heldKey returns the key of a file to suspend or resume.
func (b *Backend) heldKey(file string) (string, error) {
	if err := checkFileName(file); err != nil {
		return "", err
	}
	key, _ := b.keyOf(file)
	held, err := b.holds(context.Background(), file, key)
	if err != nil {
		return "", err
	}
	if !held {
		return "", fmt.Errorf("suspend %s: %w", file, rrdcached.ErrNotCached)
	}
	return key, nil
}

// SuspendAll suspends every file with updates pending or updated since the
// start, and returns how many were not suspended yet.
func (b *Backend) SuspendAll() int {
	keys := make(map[string]bool)
	for _, file := range b.cachedFiles() {
		keys[rrd.ProtocolKey(file)] = true
	}
	for _, pb := range b.ix.PeekKeys(func(k string) bool { return strings.HasPrefix(k, "/") }) {
		keys[pb.Key] = true
	}
	n := 0
	for k := range keys {
		if b.w.Hold(k) {
			n++
		}
	}
	return n
}

// ResumeAll resumes every suspended file and returns how many there were.
func (b *Backend) ResumeAll() int { return b.w.ReleaseAll() }

// BackendStats are the backend's counters and the spool's and writer's
// figures STATS shows.
type BackendStats struct {
	QueueLength, UpdatesReceived, FlushesReceived, UpdatesWritten uint64
	DataSetsWritten, Files, JournalBytes, JournalRotate           uint64
	ValuesReceived, Forgets, Creates, Overwrites, IndexDeferred   uint64
	// Refused counts refused updates by reason.
	Refused map[Refusal]uint64
}

// BackendStats returns the backend's statistics. It reads the index's
// Stats, which visits every key.
func (b *Backend) BackendStats() BackendStats {
	is, ss := b.ix.Stats(), b.sp.Stats()
	calls, written := b.w.Written()
	files := len(b.cachedFiles())
	c := &b.c
	s := BackendStats{
		QueueLength: uint64(is.Keys), UpdatesReceived: c.updates.Load(), FlushesReceived: c.flushes.Load(),
		UpdatesWritten: calls, DataSetsWritten: written, Files: uint64(files),
		JournalBytes: ss.WrittenBytes, JournalRotate: ss.SegmentsClosed,
		ValuesReceived: c.values.Load(), Forgets: c.forgets.Load(), Creates: c.creates.Load(),
		Overwrites: c.overwrites.Load(), IndexDeferred: c.indexDeferred.Load(),
		Refused: make(map[Refusal]uint64, len(refusalNames)),
	}
	for i, r := range refusalNames {
		s.Refused[r] = c.refused[i].Load()
	}
	return s
}
