package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"time"
)

// SpoolSize is the spool's size and the loader time it implies.
type SpoolSize struct {
	Entries  uint64 `json:"entries"`
	LeafDirs int    `json:"leaf_dirs"`
	// WalkSeconds is how long the doctor's names-only walk took: an
	// estimate of the loader's own work (with the page cache as it was).
	WalkSeconds float64 `json:"walk_seconds"`
	// Iterations is the loader iterations the settings imply: at most
	// loader_files entries or loader_threshold of work each.
	Iterations uint64 `json:"iterations"`
	// SleepSeconds is Iterations × loader_sleep, nginx's formula; in CPU
	// mode the pause the CPU share implies.
	SleepSeconds float64 `json:"sleep_seconds"`
	// LoadSeconds is SleepSeconds plus the work: the expected time to index
	// the whole spool after a restart.
	LoadSeconds float64 `json:"load_seconds"`
}

func checkSpool(r *Report, o Options) {
	if o.CountSpool == nil || o.Loader.Estimate == nil {
		return
	}
	t0 := time.Now()
	files, leaves, err := o.CountSpool(o.SpoolDir)
	s := SpoolSize{Entries: files, LeafDirs: leaves, WalkSeconds: time.Since(t0).Seconds()}
	if errors.Is(err, fs.ErrNotExist) {
		r.add(Finding{Check: "spool", Severity: OK, Dirs: []string{o.SpoolDir}, Found: "spool directory does not exist yet: nothing to load"})
		return
	}
	if err != nil {
		r.add(Finding{Check: "spool", Severity: Warn, Dirs: []string{o.SpoolDir}, Found: fmt.Sprintf("count entries: %v", err)})
		return
	}
	s.Iterations, s.SleepSeconds, s.LoadSeconds = o.Loader.Estimate(s.Entries, s.WalkSeconds)
	r.Spool = &s
	r.add(spoolFinding(s, o))
}

func spoolFinding(s SpoolSize, o Options) Finding {
	p := o.Loader
	f := Finding{Check: "spool", Severity: OK, Dirs: []string{o.SpoolDir},
		Why: "after a restart the loader indexes every entry, in iterations of loader_files entries or loader_threshold, sleeping loader_sleep after each: (entries / loader_files) × loader_sleep plus the work; a shorter load takes more CPU and disk from polling and writing"}
	if p.cpuMode() {
		f.Found = fmt.Sprintf("%d entries in %d leaf directories; walk %.2fs; at --loader-cpu %.0f%% the loader takes about %s",
			s.Entries, s.LeafDirs, s.WalkSeconds, p.CPU*100, secs(s.LoadSeconds))
	} else {
		f.Found = fmt.Sprintf("%d entries in %d leaf directories; walk %.2fs; at loader_files=%d loader_sleep=%s loader_threshold=%s: %d iterations, %s of sleep, about %s to load",
			s.Entries, s.LeafDirs, s.WalkSeconds, p.Files, p.Sleep, p.Threshold, s.Iterations, secs(s.SleepSeconds), secs(s.LoadSeconds))
	}
	limit := o.LoadTimeLimit.Seconds()
	if limit > 0 && s.LoadSeconds > limit {
		f.Severity = Warn
		f.Found += fmt.Sprintf(", longer than %s", o.LoadTimeLimit)
		if !p.cpuMode() && p.Sleep > 0 {
			// Files such that the sleeps take half the limit.
			files := int(math.Ceil(float64(s.Entries) * p.Sleep.Seconds() / (limit / 2)))
			f.Fix = fmt.Sprintf("spoold --loader-files=%d ...   # try it first: spoold load --spool-dir %s --loader-files=%d", files, o.SpoolDir, files)
		} else {
			f.Fix = "spoold --loader-cpu 50% ...   # or a higher share"
		}
	} else if !p.cpuMode() {
		f.Fix = fmt.Sprintf("spoold load --spool-dir %s --loader-files=%d --loader-sleep=%s   # measure a load with other settings", o.SpoolDir, p.Files, p.Sleep)
	}
	return f
}

func secs(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}
