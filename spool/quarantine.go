package spool

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/fileutil"
)

// reasonSuffix ends the name of the note beside each quarantined file.
const reasonSuffix = ".reason"

// Quarantine moves the segment r to quarantine/ (QuarantineName).
func (s *Spool) Quarantine(r Ref, reason string) (string, error) {
	s.mem.drop(r)
	return s.QuarantineName(s.segmentRel(r), reason)
}

// QuarantineName moves the file name, a name relative to the spool
// directory such as "c/29/x" (the loader's misfits), to quarantine/, next
// to a .reason file that says why, logs the reason and counts it. The file
// is never deleted. It returns the new path. The file's directory is
// opened beneath the spool directory through no symlink (beneath.go), and
// the file moved from it (renameat, never replacing a file there, the
// file itself not followed) into the quarantine/ that Open opened; the
// .reason file is created with O_EXCL|O_NOFOLLOW. The lock, the marker,
// tmp/ and quarantine/ themselves are refused.
func (s *Spool) QuarantineName(name, reason string) (string, error) {
	from := s.dir + "/" + name
	if s.readOnly {
		return "", fmt.Errorf("quarantine %s: the spool %s is open read-only", from, s.dir)
	}
	parent, base, err := s.openParent(name)
	if err != nil {
		return "", fmt.Errorf("quarantine %s: %w", from, err)
	}
	defer unix.Close(parent)
	qname := fmt.Sprintf("%s.%d", base, time.Now().UnixNano())
	dst := filepath.Join(s.dir, QuarantineDir, qname)
	if err := fileutil.RenameNoReplace(parent, base, s.qfd, qname); err != nil {
		return "", fmt.Errorf("quarantine %s: %w", from, err)
	}
	note := fmt.Sprintf("time: %s\nfrom: %s\nreason: %s\n", time.Now().UTC().Format(time.RFC3339), from, reason)
	if err := s.writeReason(qname+reasonSuffix, []byte(note)); err != nil {
		s.log.Warn("write quarantine reason", "path", dst+reasonSuffix, "err", err)
	}
	s.c.quarantined.Add(1)
	s.log.Warn("quarantined spool file", "from", from, "to", dst, "reason", reason)
	return dst, nil
}

// writeReason creates name in quarantine/ with content b; it never replaces
// or follows anything there.
func (s *Spool) writeReason(name string, b []byte) error {
	fd, err := fileutil.Openat(s.qfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o640)
	if err != nil {
		return err
	}
	err = fileutil.WriteAll(fd, b)
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	return err
}

// openParent opens the directory that holds name, a name relative to the
// spool directory, beneath it through no symlink, and returns its
// descriptor (O_PATH) and the file's base name.
func (s *Spool) openParent(name string) (int, string, error) {
	if !filepath.IsLocal(name) || name != filepath.Clean(name) {
		return -1, "", fmt.Errorf("not a name inside the spool %s", s.dir)
	}
	dir, base := path.Split(name)
	if dir == "" && (base == LockFile || base == MarkerFile || base == TmpDir || base == QuarantineDir) {
		return -1, "", fmt.Errorf("a fixed member of the spool %s", s.dir)
	}
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "."
	}
	fd, err := s.openDirBeneath(dir, unix.O_PATH)
	if err != nil {
		return -1, "", err
	}
	return fd, base, nil
}

// QuarantineRange copies the bad range r of segment g into quarantine/,
// next to a .reason file with its offset, length and reason, and syncs the
// copy and the directory: the caller then removes the segment once its good
// entries are applied, and the bad bytes are kept. Both files are created
// in the quarantine/ that Open opened, never replacing or following
// anything. It returns the copy's path.
func (s *Spool) QuarantineRange(g *Segment, r BadRange) (string, error) {
	if s.readOnly {
		return "", fmt.Errorf("quarantine bytes of %s: the spool %s is open read-only", g.Path, s.dir)
	}
	name := fmt.Sprintf("%s.at%d.%d", filepath.Base(g.Path), r.Offset, time.Now().UnixNano())
	dst := filepath.Join(s.dir, QuarantineDir, name)
	fail := func(err error) (string, error) {
		return "", fmt.Errorf("quarantine bytes %d..%d of %s: %w", r.Offset, r.Offset+r.Len, g.Path, err)
	}
	fd, err := fileutil.Openat(s.qfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o640)
	if err != nil {
		return fail(err)
	}
	err = fileutil.WriteAll(fd, g.Bytes(r))
	if err == nil {
		err = unix.Fdatasync(fd)
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		_ = fileutil.Unlinkat(s.qfd, name, 0)
		return fail(err)
	}
	note := fmt.Sprintf("time: %s\nfrom: %s\noffset: %d\nlength: %d\nreason: %s\n",
		time.Now().UTC().Format(time.RFC3339), g.Path, r.Offset, r.Len, r.Reason)
	if err := s.writeReason(name+reasonSuffix, []byte(note)); err != nil {
		s.log.Warn("write quarantine reason", "path", dst+reasonSuffix, "err", err)
	}
	if err := fileutil.Fsync(s.qfd, filepath.Join(s.dir, QuarantineDir)); err != nil {
		return fail(err)
	}
	s.c.quarantined.Add(1)
	s.log.Warn("quarantined bytes of a spool segment", "from", g.Path, "offset", r.Offset, "length", r.Len, "to", dst, "reason", r.Reason)
	return dst, nil
}
