package doctor

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/spoold/spoold/loader"
	"github.com/spoold/spoold/spool"
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

// countSpool counts the entries of the spool at dir with names only: it
// reads level directories with getdents and never opens or stats an entry.
// Directories that are not level directories (tmp/, quarantine/) are not
// counted.
func countSpool(dir string, l spool.Layout) (SpoolSize, error) {
	var s SpoolSize
	t0 := time.Now()
	err := walkLevel(dir, l, 0, &s)
	s.WalkSeconds = time.Since(t0).Seconds()
	return s, err
}

func walkLevel(dir string, l spool.Layout, level int, s *SpoolSize) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	leaf := level == l.Levels()
	if leaf {
		s.LeafDirs++
	}
	for {
		ents, err := f.ReadDir(1024)
		for _, e := range ents {
			switch {
			case leaf && !e.IsDir():
				s.Entries++
			case !leaf && e.IsDir() && l.LevelDirName(level, e.Name()):
				if err := walkLevel(filepath.Join(dir, e.Name()), l, level+1, s); err != nil {
					return err
				}
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read directory %s: %w", dir, err)
		}
	}
}

// estimateLoad fills in the loader time for p: iterations of at most
// p.Files entries, or p.Threshold of work; a sleep of p.Sleep after each.
// In CPU mode the work is stretched to p.CPU of one core instead.
func estimateLoad(s *SpoolSize, p loader.Params) {
	work := s.WalkSeconds
	if s.Entries == 0 {
		return
	}
	if p.CPUMode() {
		s.LoadSeconds = work / p.CPU
		s.SleepSeconds = s.LoadSeconds - work
		return
	}
	it := uint64(math.Ceil(float64(s.Entries) / float64(max(p.Files, 1))))
	if th := p.Threshold.Seconds(); th > 0 {
		it = max(it, uint64(math.Ceil(work/th)))
	}
	s.Iterations = it
	s.SleepSeconds = float64(it) * p.Sleep.Seconds()
	s.LoadSeconds = s.SleepSeconds + work
}

func checkSpool(r *Report, o Options) {
	l, err := spool.ParseLevels(o.Levels)
	if err != nil {
		r.add(Finding{Check: "spool", Severity: Warn, Dirs: []string{o.SpoolDir}, Found: fmt.Sprintf("levels %q: %v", o.Levels, err)})
		return
	}
	s, err := countSpool(o.SpoolDir, l)
	if errors.Is(err, fs.ErrNotExist) {
		r.add(Finding{Check: "spool", Severity: OK, Dirs: []string{o.SpoolDir}, Found: "spool directory does not exist yet: nothing to load"})
		return
	}
	if err != nil {
		r.add(Finding{Check: "spool", Severity: Warn, Dirs: []string{o.SpoolDir}, Found: fmt.Sprintf("count entries: %v", err)})
		return
	}
	estimateLoad(&s, o.Loader)
	r.Spool = &s
	r.add(spoolFinding(s, o))
}

func spoolFinding(s SpoolSize, o Options) Finding {
	p := o.Loader
	f := Finding{Check: "spool", Severity: OK, Dirs: []string{o.SpoolDir},
		Why: "after a restart the loader indexes every entry, in iterations of loader_files entries or loader_threshold, sleeping loader_sleep after each: (entries / loader_files) × loader_sleep plus the work; a shorter load takes more CPU and disk from polling and writing"}
	if p.CPUMode() {
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
		if !p.CPUMode() && p.Sleep > 0 {
			// Files such that the sleeps take half the limit.
			files := int(math.Ceil(float64(s.Entries) * p.Sleep.Seconds() / (limit / 2)))
			f.Fix = fmt.Sprintf("spoold --loader-files=%d ...   # try it first: spoold load --spool-dir %s --loader-files=%d", files, o.SpoolDir, files)
		} else {
			f.Fix = "spoold --loader-cpu 50% ...   # or a higher share"
		}
	} else if !p.CPUMode() {
		f.Fix = fmt.Sprintf("spoold load --spool-dir %s --loader-files=%d --loader-sleep=%s   # measure a load with other settings", o.SpoolDir, p.Files, p.Sleep)
	}
	return f
}

func secs(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond).String()
}
