package loader

import (
	"errors"
	"io/fs"

	"github.com/spoold/spoold/internal/fileutil"
)

// afterFile counts a file, logs progress when due, applies the throttle
// with the current parameters and checks for cancellation.
func (w *walk) afterFile() error {
	w.l.c.files.Add(1)
	if w.onDemand {
		return w.cancelled()
	}
	p := w.l.params.Load()
	now := w.l.clock.Now()
	w.maybeLog(now)
	if err := w.th.afterFile(w.ctx, p, now); err != nil {
		return err
	}
	return w.cancelled()
}

// cancelled returns ctx.Err() once ctx is done, cheaply otherwise.
func (w *walk) cancelled() error {
	select {
	case <-w.done:
		return w.ctx.Err()
	default:
		return nil
	}
}

// quarantine moves the file name of the directory at depth to quarantine/.
// A file gone meanwhile is no problem; another failure is counted. A dry
// run only counts and logs it.
func (w *walk) quarantine(depth int, name, reason string) {
	if w.l.dryRun {
		w.l.c.quarantined.Add(1)
		w.l.log.Warn("dry run: would quarantine", "path", w.path(depth, name), "reason", reason)
		return
	}
	_, err := w.l.sp.QuarantineName(w.rel(depth, name), reason)
	switch {
	case err == nil:
		w.l.c.quarantined.Add(1)
	case !errors.Is(err, fs.ErrNotExist):
		w.problem("quarantine", err)
	}
}

// foreign counts and logs something the loader does not know and leaves
// alone.
func (w *walk) foreign(path string, typ uint8) {
	w.l.c.foreign.Add(1)
	w.l.log.Warn("unknown spool member left alone", "path", path, "type", fileutil.DirentTypeName(typ))
}

// problem counts and logs a failure the walk goes on after.
func (w *walk) problem(what string, err error) {
	w.l.c.errors.Add(1)
	w.l.log.Error("loader: "+what, "err", err)
}
