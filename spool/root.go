package spool

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// How Open recognises its own spool, before it creates anything in the
// directory:
//
//   - With a marker (MarkerFile) it is a spool; the marker's levels must be
//     the ones asked for.
//   - Empty, it becomes a new spool.
//   - Without a marker, it is adopted as a spool made before the marker
//     existed when it holds a regular file "lock" and nothing else but
//     tmp/, quarantine/ and level directories named for the levels asked
//     for: every spool spoold ever made has the lock (the first thing Open
//     creates), and a directory of someone else's hardly has just these.
//   - Anything else is refused, naming the directory and what is in it.
//
// In every case a fixed member that is a symlink, or of the wrong type (a
// directory called lock), is an error that names it.

// rootScan is what the top of a spool directory holds.
type rootScan struct {
	entries     int      // names, fixed members included
	first       string   // the first name in sorted order
	marker      bool     // a regular file MarkerFile
	lock        bool     // a regular file LockFile
	foreign     []string // names that are no member of a spool of this layout, sorted
	otherLevels bool     // every foreign name is a directory named like a level of other widths
}

// scanRoot reads the top of the spool directory and checks the type of each
// fixed member there.
func (s *Spool) scanRoot() (rootScan, error) {
	names, err := readDirNames(s.rootfd, s.dir)
	if err != nil {
		return rootScan{}, fmt.Errorf("open spool %s: %w", s.dir, err)
	}
	slices.Sort(names)
	sc := rootScan{otherLevels: true}
	for _, name := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(s.rootfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue // gone meanwhile
			}
			return rootScan{}, fmt.Errorf("open spool %s: stat %s: %w", s.dir, name, err)
		}
		if sc.entries == 0 {
			sc.first = name
		}
		sc.entries++
		if err := s.scanMember(&sc, name, st.Mode); err != nil {
			return rootScan{}, err
		}
	}
	if len(sc.foreign) == 0 {
		sc.otherLevels = false
	}
	return sc, nil
}

// scanMember notes the entry name of type mode in sc; a fixed member of the
// wrong type is an error.
func (s *Spool) scanMember(sc *rootScan, name string, mode uint32) error {
	path := filepath.Join(s.dir, name)
	isDir := mode&unix.S_IFMT == unix.S_IFDIR
	switch {
	case name == MarkerFile || name == LockFile:
		if err := wantType(s.rootfd, name, path, mode, unix.S_IFREG); err != nil {
			return err
		}
		sc.marker = sc.marker || name == MarkerFile
		sc.lock = sc.lock || name == LockFile
	case name == TmpDir || name == QuarantineDir:
		return wantType(s.rootfd, name, path, mode, unix.S_IFDIR)
	case s.layout.LevelDirName(0, name) && mode&unix.S_IFMT == unix.S_IFLNK:
		return symlinkError(s.rootfd, name, path)
	case s.layout.LevelDirName(0, name) && isDir:
	default:
		sc.foreign = append(sc.foreign, name)
		sc.otherLevels = sc.otherLevels && isDir && len(name) <= 2 && canonicalLevelName(name)
	}
	return nil
}

// canonicalLevelName reports whether name is lower-case hex digits.
func canonicalLevelName(name string) bool {
	for i := 0; i < len(name); i++ {
		if _, ok := unhex(name[i]); !ok {
			return false
		}
	}
	return true
}

// recognise scans the spool directory and decides: it returns whether the
// marker is to be written (a new spool, or one adopted), or an error when
// the directory is not a spool of this layout.
func (s *Spool) recognise(readOnly bool) (needMarker bool, sc rootScan, err error) {
	sc, err = s.scanRoot()
	if err != nil {
		return false, sc, err
	}
	if sc.marker {
		l, err := s.readMarker()
		if err != nil {
			return false, sc, fmt.Errorf("open spool %s: %w", s.dir, err)
		}
		if l != s.layout {
			return false, sc, fmt.Errorf("open spool %s: the spool has levels %q (marker %s) but --levels %s was given; a walk with other levels would quarantine every entry: use --levels %s",
				s.dir, l, filepath.Join(s.dir, MarkerFile), s.layout, l)
		}
		return false, sc, nil
	}
	switch {
	case sc.entries == 0 && readOnly:
		return false, sc, fmt.Errorf("open spool %s: empty directory, not a spool yet", s.dir)
	case sc.entries == 0, sc.lock && len(sc.foreign) == 0:
		return true, sc, nil
	}
	return false, sc, s.notASpool(sc)
}

// notASpool is the refusal of a directory that is not a spool.
func (s *Spool) notASpool(sc rootScan) error {
	sample := sc.first
	if len(sc.foreign) > 0 {
		sample = sc.foreign[0]
	}
	what := fmt.Sprintf("%d entries such as %q", sc.entries, sample)
	if sc.entries == 1 {
		what = fmt.Sprintf("1 entry, %q", sample)
	}
	var hint []string
	if !sc.lock {
		hint = append(hint, "no lock file")
	}
	if sc.otherLevels {
		hint = append(hint, fmt.Sprintf("its level directories such as %q do not fit --levels %s", sample, s.layout))
	}
	if len(hint) > 0 {
		what += "; " + strings.Join(hint, ", ")
	}
	return fmt.Errorf("open spool %s: not a spoold spool (no marker %s, directory not empty: %s); point --spool-dir at an empty directory or a spoold spool",
		s.dir, filepath.Join(s.dir, MarkerFile), what)
}
