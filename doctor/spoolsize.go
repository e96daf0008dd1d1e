package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"time"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/fileutil"
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

// countSpool counts the files of the spool at dir with names only, with
// the loader's own walk of the tree (spool.TreeWalker): level directories with
// getdents, never an open or stat of a file. Regular files in leaf
// directories are what the loader's loader_files counts (segments, one or
// more entries each); tmp/ and quarantine/ are not level directories. A
// directory that cannot be read is an error after the walk.
func countSpool(dir string, l spool.Layout) (SpoolSize, error) {
	var s SpoolSize
	t0 := time.Now()
	root, err := openDir(unix.AT_FDCWD, dir)
	if err != nil {
		return s, fmt.Errorf("open spool %s: %w", dir, err)
	}
	defer unix.Close(root)
	c := &spoolCount{dir: dir, dr: spool.NewDirReader(), s: &s}
	walker := &spool.TreeWalker{Layout: l, Dirs: c.dr, OpenDir: openDir}
	err = walker.Walk(root, c)
	s.WalkSeconds = time.Since(t0).Seconds()
	if err == nil {
		err = c.err
	}
	return s, err
}

// spoolCount is the doctor's spool.TreeVisitor: it counts leaf
// directories and the regular files in them.
type spoolCount struct {
	dir string
	dr  *spool.DirReader
	s   *SpoolSize
	err error // the first directory that could not be read
}

func (c *spoolCount) Enter(int, string) error        { return nil }
func (c *spoolCount) Entry(int, string, uint8) error { return nil }
func (c *spoolCount) Problem(what string, _ int, err error) {
	c.fail(fmt.Errorf("%s in %s: %w", what, c.dir, err))
}

func (c *spoolCount) Leaf(parent int, name string, _ int) error {
	fd, err := openDir(parent, name)
	if err != nil {
		c.fail(fmt.Errorf("open directory %s in %s: %w", name, c.dir, err))
		return nil
	}
	defer unix.Close(fd)
	c.s.LeafDirs++
	err = c.dr.Each(fd, func(name []byte, typ uint8) error {
		if t, err := spool.ResolveType(fd, name, typ); err == nil && t == unix.DT_REG {
			c.s.Entries++
		}
		return nil
	})
	if err != nil {
		c.fail(fmt.Errorf("read directory %s in %s: %w", name, c.dir, err))
	}
	return nil
}

func (c *spoolCount) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// openDir opens a directory of the spool for reading, never through a
// symlink below the spool directory itself.
func openDir(dirfd int, name string) (int, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	if dirfd != unix.AT_FDCWD {
		flags |= unix.O_NOFOLLOW
	}
	return fileutil.Openat(dirfd, name, flags, 0)
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
