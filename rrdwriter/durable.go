package rrdwriter

import (
	"context"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/enum"
	"github.com/spoold/spoold/spool"
)

// RRD durability (Options.RRDFsync). librrd changes an RRD file through a
// shared mapping and never syncs it: the kernel writes the pages back some
// 30 s later, while the removal of the spool entries the update replaced
// reaches the disk with the next journal commit, about 5 s later. After a
// power loss the entries can be gone while the file is older than them.
// The policies close that gap:
//
//	none    remove the entries at once (the default, like --fsync none:
//	        a process crash loses nothing, a power loss the last ~35 s);
//	always  fdatasync each RRD file after its update, then remove;
//	batch   hand the applied entries to a remover that syncs the RRD file
//	        system once (syncfs) for all entries handed to it meanwhile,
//	        then removes them: a group commit, off the writers' path.
//
// An entry whose removal waits is already settled in the index; if the
// process dies first, the next start indexes it again and the writer skips
// it as already applied (or applies it, if the power loss took the update).

// SyncPolicy is when an updated RRD file is made durable before the spool
// segments it replaces are removed (--rrd-fsync). Its names are the spool's
// (--fsync) but not its meanings: the spool syncs what it wrote, the writer
// syncs the RRD files before it removes what it applied.
type SyncPolicy uint8

// RRD sync policies.
const (
	// SyncNone removes applied segments at once: a process crash loses
	// nothing, a power loss the last ~35 s of updates.
	SyncNone SyncPolicy = iota
	// SyncBatch hands applied segments to a remover that syncs the RRD
	// file system once (syncfs) for all of them, then removes them.
	SyncBatch
	// SyncAlways fdatasyncs each RRD file after its update, then removes.
	SyncAlways
)

var syncNames = [...]string{"none", "batch", "always"}

func (p SyncPolicy) String() string { return enum.Name(syncNames[:], "SyncPolicy", int(p)) }

// ParseSyncPolicy parses "none", "batch" or "always".
func ParseSyncPolicy(s string) (SyncPolicy, error) {
	i, err := enum.Parse(syncNames[:], "rrd sync policy", s)
	return SyncPolicy(i), err
}

// syncFile makes the RRD file at path durable (policy always).
func (w *Writer) syncFile(path string) error {
	fd, err := w.o.RRD.Root().Open(path, unix.O_RDONLY)
	if err != nil {
		return fmt.Errorf("sync rrd %s: %w", path, err)
	}
	defer unix.Close(fd)
	if err := unix.Fdatasync(fd); err != nil {
		return fmt.Errorf("sync rrd %s: %w", path, err)
	}
	return nil
}

// remover removes applied entries after one syncfs of the RRD file system
// covers them (policy batch).
type remover struct {
	w    *Writer
	mu   sync.Mutex
	refs []spool.Ref // applied, waiting for a sync
	kick chan struct{}
	// syncMu lets one flush sync and remove at a time, so a flush that
	// returns has removed every entry handed over before it was called.
	syncMu sync.Mutex
}

func newRemover(w *Writer) *remover {
	return &remover{w: w, kick: make(chan struct{}, 1)}
}

// add hands over segments whose values librrd accepted, in the order they
// must be removed (their newest entries ascending).
func (r *remover) add(refs []spool.Ref) {
	r.mu.Lock()
	r.refs = append(r.refs, refs...)
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// pending returns how many segments wait for a sync.
func (r *remover) pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.refs)
}

// run flushes whenever entries were handed over, until ctx ends; then it
// flushes once more.
func (r *remover) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			_ = r.flush()
			return
		case <-r.kick:
			_ = r.flush()
		}
	}
}

// flush syncs the RRD file system and removes every entry handed over so
// far. On a failed sync the entries stay, on disk and in the queue, and
// the next flush tries again.
func (r *remover) flush() error {
	r.syncMu.Lock()
	defer r.syncMu.Unlock()
	r.mu.Lock()
	refs := r.refs
	r.refs = nil
	r.mu.Unlock()
	if len(refs) == 0 {
		return nil
	}
	if err := r.w.syncFS(); err != nil {
		r.mu.Lock()
		r.refs = append(refs, r.refs...)
		r.mu.Unlock()
		r.w.c.rrdSyncErrors.Add(1)
		r.w.log.Error("sync rrd file system; applied spool entries kept", "entries", len(refs), "err", err)
		return err
	}
	for _, ref := range refs {
		r.w.removeSegment(r.w.sp, ref)
	}
	return nil
}

// syncFS writes back every dirty page of the file system holding the RRD
// files (syncfs(2) on its directory).
func (w *Writer) syncFS() error {
	w.c.rrdSyncs.Add(1)
	return w.o.RRD.Root().SyncFS()
}
