package spool

import (
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/fileutil"
)

// Read reads and verifies the entry named r. A file that fails to decode, or
// whose content does not match its name, gives a *CorruptionError carrying
// the path; the caller decides to Quarantine it. A missing entry gives an
// error wrapping fs.ErrNotExist. A file that can never be read as an entry
// (a symlink, a FIFO, a directory, a file without read permission, a file
// longer than any entry) is a *CorruptionError too. Reads use O_NOATIME
// where the kernel allows it (the file's owner or CAP_FOWNER), so reading
// the spool writes no inodes.
//
// The entry is opened beneath the spool directory (beneath.go): a level
// directory that is a symlink refuses the read with an error wrapping
// ErrSymlinkOnPath.
func (s *Spool) Read(r Ref) (Entry, error) {
	return s.readEntry(s.rootfd, s.segmentRel(r), s.EntryPath(r), r)
}

// Remove deletes the entry named r, relative to its level directory opened
// beneath the spool directory. Call it only once the entry's values are
// safely elsewhere (applied to their RRD file). An entry that is already
// gone is not an error.
func (s *Spool) Remove(r Ref) error {
	s.mem.drop(r)
	if err := s.unlinkSegment(r); err != nil {
		return fmt.Errorf("remove spool entry %s: %w", s.EntryPath(r), err)
	}
	s.c.removed.Add(1)
	return nil
}

// Dir is the level directory of one key hash, open for a run of reads and
// removals of that key's entries: each is one openat(2) or unlinkat(2)
// relative to it, without resolving the level directory's name again. The
// writer reads and removes the pending entries of a key this way when
// there are several.
type Dir struct {
	s    *Spool
	fd   int
	hash uint64
	path string
}

// OpenDir opens the level directory that holds the entries of hash,
// beneath the spool directory: one that is a symlink, or is reached
// through one, is refused with an error wrapping ErrSymlinkOnPath.
func (s *Spool) OpenDir(hash uint64) (*Dir, error) {
	path := s.levelPath(hash)
	fd, err := s.openLevelDir(hash, unix.O_RDONLY)
	if err != nil {
		return nil, fmt.Errorf("open spool directory %s: %w", path, err)
	}
	return &Dir{s: s, fd: fd, hash: hash, path: path}, nil
}

// Read is Spool.Read for an entry of the directory's hash.
func (d *Dir) Read(r Ref) (Entry, error) {
	name, err := d.name(r)
	if err != nil {
		return Entry{}, err
	}
	return d.s.readEntry(d.fd, name, d.path+"/"+name, r)
}

// Remove is Spool.Remove for an entry of the directory's hash.
func (d *Dir) Remove(r Ref) error {
	name, err := d.name(r)
	if err != nil {
		return err
	}
	d.s.mem.drop(r)
	return d.s.removeEntry(d.fd, name, d.path+"/"+name)
}

// Close closes the directory.
func (d *Dir) Close() error {
	if err := unix.Close(d.fd); err != nil {
		return fmt.Errorf("close spool directory %s: %w", d.path, err)
	}
	return nil
}

func (d *Dir) name(r Ref) (string, error) {
	if r.Hash != d.hash {
		return "", fmt.Errorf("use spool directory %s: entry %s belongs to another directory", d.path, r)
	}
	var b [MaxNameLen]byte
	return string(r.AppendName(b[:0])), nil
}

// readEntry reads the entry name, relative to dirfd (the spool directory
// or the entry's level directory), whose full path is path, and checks it
// against r.
func (s *Spool) readEntry(dirfd int, name, path string, r Ref) (Entry, error) {
	data, err := s.readFile(dirfd, name, path, maxEntryLen, nil)
	var e Entry
	if err == nil {
		e, err = Decode(data)
	} else if !errors.Is(err, ErrCorrupt) {
		s.c.readErrors.Add(1)
		return Entry{}, err
	}
	if err == nil && (e.Time != r.Time || KeyHash(e.Key) != r.Hash) {
		err = &CorruptionError{Offset: 6, Reason: fmt.Sprintf("content (key %q, time %d) does not match the name %s", e.Key, e.Time, r)}
	}
	if err != nil {
		var ce *CorruptionError
		if errors.As(err, &ce) {
			ce.Path = path
		}
		s.c.corrupt.Add(1)
		return Entry{}, err
	}
	s.c.read.Add(1)
	return e, nil
}

func (s *Spool) removeEntry(dirfd int, name, path string) error {
	err := fileutil.Unlinkat(dirfd, name, 0)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove spool entry %s: %w", path, err)
	}
	s.c.removed.Add(1)
	return nil
}

// maxEntryLen is the length of the largest valid entry: a longer file is
// corrupt, and reading stops there instead of filling memory.
const maxEntryLen = headerLen + MaxKeyLen + MaxValues*(2+MaxValueNameLen+valuePayloadLen) + trailerLen

// readFile reads the entry name, relative to dirfd (the spool directory
// or the entry's level directory), with raw system calls (no *os.File, no
// poller registration). It resolves name beneath dirfd through no symlink
// (a symlink on the way is refused, one in place of the file is corrupt),
// never blocks on a FIFO or device (O_NONBLOCK, then fstat),
// and reads at most limit+1 bytes. A file that is not a regular file,
// cannot be read for lack of permission, or is longer than limit gives a
// *CorruptionError: it can never become a valid entry, so it goes to the
// quarantine rather than holding up its target's later entries.
//
// It reads into dst's spare capacity when the file fits, into a new
// buffer otherwise.
func (s *Spool) readFile(dirfd int, name, path string, limit int64, dst []byte) ([]byte, error) {
	fd, err := s.noAtime.OpenBeneath(dirfd, name, entryOpenFlags)
	if err != nil && dirfd == s.rootfd {
		err = s.refused(name, err)
	}
	if err != nil {
		if reason, ok := unreadableReason(err); ok {
			return nil, &CorruptionError{Path: path, Reason: reason}
		}
		return nil, fmt.Errorf("open spool entry %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("stat spool entry %s: %w", path, err)
	}
	if t := st.Mode & unix.S_IFMT; t != unix.S_IFREG {
		return nil, &CorruptionError{Path: path, Reason: "not a regular file: " + fileutil.TypeName(t)}
	}
	if st.Size > limit {
		return nil, &CorruptionError{Path: path, Offset: limit, Reason: fmt.Sprintf("%d bytes, longer than the largest %s (%d)", st.Size, limitName(limit), limit)}
	}
	buf := dst[:0]
	if cap(buf) < int(st.Size)+1 {
		buf = make([]byte, 0, max(512, int(st.Size)+1))
	}
	for {
		n, err := fileutil.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case err != nil:
			return nil, fmt.Errorf("read spool entry %s: %w", path, err)
		case n == 0:
			return buf, nil
		}
		buf = buf[:len(buf)+n]
		if int64(len(buf)) == st.Size {
			// The buffer has room past the size the stat saw, so this
			// read returned less than asked for: a regular file's end,
			// the whole file, without the read(2) that would return 0.
			// An append since the stat would have filled that room.
			return buf, nil
		}
		if int64(len(buf)) > limit {
			return nil, &CorruptionError{Path: path, Offset: limit, Reason: fmt.Sprintf("longer than the largest %s (%d bytes)", limitName(limit), limit)}
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

func limitName(limit int64) string {
	if limit == maxEntryLen {
		return "entry"
	}
	return "segment"
}

// unreadableReason says why an open error means the file can never be read
// as an entry: a symlink (O_NOFOLLOW gives ELOOP) or a permission problem.
func unreadableReason(err error) (string, bool) {
	switch {
	case errors.Is(err, unix.ELOOP):
		return "a symlink: entries are never followed", true
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return "unreadable: " + err.Error(), true
	case errors.Is(err, unix.ENXIO):
		return "not a regular file: a socket or device without a reader", true
	}
	return "", false
}

// entryOpenFlags are the flags of every entry open: read-only, no symlink
// followed, no blocking on a FIFO.
const entryOpenFlags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
