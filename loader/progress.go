package loader

import (
	"fmt"
	"time"
)

// maybeLog writes a progress line when one is due at now.
func (w *walk) maybeLog(now time.Time) {
	if w.l.every <= 0 || now.Before(w.nextLog) {
		return
	}
	w.nextLog = now.Add(w.l.every)
	s := w.l.c.snapshot(now)
	w.l.log.Info("loader progress", "dirs", s.LeafDirs, "progress", percent(s.Progress),
		"entries", s.Files, "rate", fmt.Sprintf("%.0f/s", s.Rate), "eta", s.ETA.Round(time.Second))
}

// logSummary writes the line that ends a walk.
func (l *Loader) logSummary(s Stats, err error) {
	args := []any{"dirs", s.LeafDirs, "progress", percent(s.Progress), "files", s.Files,
		"indexed", s.Indexed, "existing", s.Existing, "full", s.Full, "quarantined", s.Quarantined,
		"temp_removed", s.TempRemoved, "foreign", s.Foreign, "errors", s.Errors,
		"elapsed", s.Finished.Sub(s.Started), "rate", fmt.Sprintf("%.0f/s", s.Rate),
		"iterations", s.Iterations, "sleeps", s.Sleeps, "slept", s.Slept, "cpu", s.CPU}
	if err != nil {
		l.log.Warn("loader stopped", append(args, "err", err)...)
		return
	}
	l.log.Info("loader finished", args...)
}

func percent(p float64) string { return fmt.Sprintf("%.1f%%", 100*p) }
