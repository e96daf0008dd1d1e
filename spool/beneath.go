package spool

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/fileutil"
)

// Every segment, and the level directory that holds it, is reached
// beneath the spool directory's descriptor (rootfd, opened once by Open)
// by its name relative to it, "c/29/<hash16>-<seconds>": the kernel
// resolves the name at each open through no symlink (fileutil.OpenBeneath,
// openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS). A level directory
// swapped for a symlink, wherever it points, refuses the append, read,
// removal or quarantine that would go through it, with an error that
// names the file and wraps ErrSymlinkOnPath, counted in
// Stats.SymlinksRefused; nothing is written or read there. The open walks
// the spool's levels only, not the spool directory's own path from "/".
// A descriptor already open (a held segment's, a Dir's) stays on its file
// or directory wherever that is renamed: no symlink can redirect it.

// ErrSymlinkOnPath is wrapped by the error of an open of a spool file or
// level directory refused because a symlink stands on the way.
var ErrSymlinkOnPath = errors.New("refused: a symlink on the way, and spoold resolves spool names beneath the spool directory through none")

// checkBeneath checks, at Open, that opens beneath the spool directory
// rootfd work here: a system call filter that refuses openat2 with EPERM
// would otherwise make every segment read look unreadable.
func checkBeneath(rootfd int, dir string) error {
	fd, err := fileutil.OpenBeneath(rootfd, ".", unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return fmt.Errorf("open spool %s: open beneath it (openat2 with RESOLVE_BENEATH, refused by a system call filter?): %w", dir, err)
	}
	return unix.Close(fd)
}

// appendRel appends the name of the segment r relative to the spool
// directory.
func (s *Spool) appendRel(dst []byte, r Ref) []byte {
	dst = s.layout.AppendDir(dst, r.Hash)
	dst = append(dst, '/')
	return r.AppendName(dst)
}

// segmentRel returns the name of the segment r relative to the spool
// directory.
func (s *Spool) segmentRel(r Ref) string {
	var b [3*3 + MaxNameLen]byte
	return string(s.appendRel(b[:0], r))
}

// openBeneath opens rel, a name relative to the spool directory, with
// flags, through no symlink. A symlink on the way is counted and its
// error wraps ErrSymlinkOnPath; the error names no file (the caller does).
func (s *Spool) openBeneath(rel string, flags int, mode uint32) (int, error) {
	fd, err := fileutil.OpenBeneath(s.rootfd, rel, flags, mode)
	if err != nil {
		return -1, s.refused(rel, err)
	}
	return fd, nil
}

// refused turns the error of an open of rel beneath the spool directory
// that met a symlink (ELOOP, EXDEV) into one wrapping ErrSymlinkOnPath,
// and counts it. A symlink in place of the file itself (the last
// component, opened with O_NOFOLLOW) is not one on the way: its ELOOP is
// left as it is, for the reader to quarantine the link.
func (s *Spool) refused(rel string, err error) error {
	if err != unix.ELOOP && err != unix.EXDEV {
		return err
	}
	if dir := path.Dir(rel); err == unix.ELOOP && (dir == "." || s.dirBeneath(dir)) {
		return err
	}
	return s.symlinkOnPath(err)
}

// symlinkOnPath counts an open refused because a symlink stood on the
// way, and returns its error wrapping ErrSymlinkOnPath.
func (s *Spool) symlinkOnPath(err error) error {
	s.c.symlinksRefused.Add(1)
	return fmt.Errorf("%w (%v)", ErrSymlinkOnPath, err)
}

// dirBeneath reports whether the directory rel is reached beneath the
// spool directory through no symlink.
func (s *Spool) dirBeneath(rel string) bool {
	fd, err := fileutil.OpenBeneath(s.rootfd, rel, unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return false
	}
	unix.Close(fd)
	return true
}

// openDirBeneath opens the directory rel, a name relative to the spool
// directory, with flags (O_DIRECTORY is added), through no symlink: one on
// the way or in its place is counted and refused.
func (s *Spool) openDirBeneath(rel string, flags int) (int, error) {
	fd, err := fileutil.OpenBeneath(s.rootfd, rel, flags|unix.O_DIRECTORY, 0)
	return fd, s.dirRefused(err)
}

// dirRefused is refused for the open of a directory: a symlink in its
// place is one on the way to the files in it.
func (s *Spool) dirRefused(err error) error {
	if err == unix.ELOOP || err == unix.EXDEV {
		return s.symlinkOnPath(err)
	}
	return err
}

// openLevelDir opens the level directory of hash with flags, beneath the
// spool directory (openDirBeneath).
func (s *Spool) openLevelDir(hash uint64, flags int) (int, error) {
	var b [3 * 3]byte
	return s.openDirBeneath(string(s.layout.AppendDir(b[:0], hash)), flags)
}

// makeLevelDir creates the missing level directories of hash, each
// relative to its parent, opened beneath the spool directory.
func (s *Spool) makeLevelDir(hash uint64) error {
	at := s.rootfd
	defer func() {
		if at != s.rootfd {
			unix.Close(at)
		}
	}()
	for _, name := range strings.Split(s.layout.Dir(hash), "/") {
		if err := fileutil.Mkdirat(at, name, 0o750); err != nil && err != unix.EEXIST {
			return err
		}
		fd, err := fileutil.OpenBeneath(at, name, unix.O_PATH|unix.O_DIRECTORY, 0)
		if err != nil {
			return s.dirRefused(err)
		}
		if at != s.rootfd {
			unix.Close(at)
		}
		at = fd
	}
	return nil
}

// syncLevelDir fsyncs the level directory of hash (FsyncAlways: a new
// name in it is durable after).
func (s *Spool) syncLevelDir(hash uint64) error {
	fd, err := s.openLevelDir(hash, unix.O_RDONLY)
	if err != nil {
		return fmt.Errorf("open spool directory %s for fsync: %w", s.levelPath(hash), err)
	}
	defer unix.Close(fd)
	return fileutil.Fsync(fd, s.levelPath(hash))
}

// levelPath returns the path of the level directory of hash, for
// messages.
func (s *Spool) levelPath(hash uint64) string { return s.dir + "/" + s.layout.Dir(hash) }

// unlinkSegment removes the segment r, relative to its level directory
// opened beneath the spool directory. A segment or directory that is gone
// is not an error.
func (s *Spool) unlinkSegment(r Ref) error {
	fd, err := s.openLevelDir(r.Hash, unix.O_PATH)
	if err == nil {
		var b [MaxNameLen]byte
		err = fileutil.Unlinkat(fd, string(r.AppendName(b[:0])), 0)
		unix.Close(fd)
	}
	if err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	return nil
}
