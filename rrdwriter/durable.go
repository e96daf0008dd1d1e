package rrdwriter

import (
	"fmt"
	"slices"
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
// The policies close that gap, in the removal stage (removal.go), which
// ends every batch:
//
//	none    remove the entries at once (the default, like --fsync none:
//	        a process crash loses nothing, a power loss the last ~35 s);
//	always  fdatasync each RRD file after its update, then remove;
//	batch   sync the RRD file system once (syncfs) for every group of
//	        applied entries waiting meanwhile, then remove them: a group
//	        commit, off the writers' path.
//
// A batch whose file could not be made durable keeps its entries on disk
// and holds its key (stuck.go) until a retry syncs and removes them; if
// the process dies first, the next start indexes them again and the
// writer skips them as applied (or applies them, if a power loss took the
// update).

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
	// SyncBatch removes applied segments after a syncfs of the RRD file
	// system that started after their update, shared by all waiting.
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

// durable makes the RRD files of a group of removal jobs durable as the
// policy asks (removals.durable). It returns nil if all are, or an error
// for each job.
func (w *Writer) durable(group []removalJob) []error {
	var errs []error
	fail := func(i int, err error) {
		if errs == nil {
			errs = make([]error, len(group))
		}
		errs[i] = err
	}
	switch w.o.RRDFsync {
	case SyncBatch:
		applied := slices.ContainsFunc(group, func(j removalJob) bool { return j.file != "" })
		if !applied {
			break
		}
		if err := w.syncs.do(); err != nil {
			w.log.Error("sync rrd file system; applied spool segments are kept and their targets wait until a sync succeeds", "segments", len(group), "err", err)
			for i := range group {
				fail(i, err)
			}
		}
	case SyncAlways:
		for i, j := range group {
			if j.file == "" {
				continue
			}
			if err := w.syncFile(j.file); err != nil {
				fail(i, err)
			}
		}
	}
	return errs
}

// keepUnsynced records r stuck, untried: its RRD file was not made
// durable. The retry syncs before it removes (retryStuck).
func (w *Writer) keepUnsynced(r spool.Ref) { w.addStuck(r) }

// syncFile makes the RRD file at path durable (policy always).
func (w *Writer) syncFile(path string) error {
	w.c.rrdSyncs.Add(1)
	fd, err := w.o.RRD.Root().Open(path, unix.O_RDONLY)
	if err == nil {
		err = unix.Fdatasync(fd)
		unix.Close(fd)
	}
	if err != nil {
		w.c.rrdSyncErrors.Add(1)
		w.log.Error("sync rrd file; its applied spool segments are kept and its target waits until a sync succeeds", "path", path, "err", err)
		return fmt.Errorf("sync rrd %s: %w", path, err)
	}
	return nil
}

// syncGroup runs a sync for each caller that needs one, one at a time: a
// caller waits for a sync that starts after its call, and shares it with
// every caller that came while the one before ran (a group commit, as
// databases commit their logs).
type syncGroup struct {
	sync    func() error
	mu      sync.Mutex
	cond    sync.Cond
	running bool
	started uint64 // syncs started, numbered from 1
	done    uint64 // the number of the last that ended
	failed  uint64 // the number of the last that failed (0: none)
	err     error  // its error
	errors  uint64 // how many failed
}

func newSyncGroup(sync func() error) *syncGroup {
	g := &syncGroup{sync: sync}
	g.cond.L = &g.mu
	return g
}

// do returns once a sync that started after the call ended: nil, or the
// error of one that failed since (a page written back with an error may
// be marked clean: a later sync that succeeds does not prove it durable).
func (g *syncGroup) do() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	need := g.started + 1 // one running started before the call
	for g.done < need {
		if g.running {
			g.cond.Wait()
			continue
		}
		g.running = true
		g.started++
		n := g.started
		g.mu.Unlock()
		err := g.sync()
		g.mu.Lock()
		g.running, g.done = false, n
		if err != nil {
			g.failed, g.err = n, err
			g.errors++
		}
		g.cond.Broadcast()
	}
	if g.failed >= need {
		return g.err
	}
	return nil
}

// counts returns how many syncs ended and how many of them failed.
func (g *syncGroup) counts() (syncs, errors uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.done, g.errors
}
