package spool

import (
	"errors"
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"
)

// Read reads and verifies the entry named r. A file that fails to decode, or
// whose content does not match its name, gives a *CorruptionError carrying
// the path; the caller decides to Quarantine it. A missing entry gives an
// error wrapping fs.ErrNotExist. Reads use O_NOATIME where the kernel allows
// it (the file's owner or CAP_FOWNER), so reading the spool writes no inodes,
// and O_NOFOLLOW: a symbolic link is never followed.
func (s *Spool) Read(r Ref) (Entry, error) {
	path := s.EntryPath(r)
	return s.readEntry(unix.AT_FDCWD, path, path, r)
}

// Remove deletes the entry named r. Call it only once the entry's values are
// safely elsewhere (applied to their RRD file). An entry that is already
// gone is not an error.
func (s *Spool) Remove(r Ref) error {
	path := s.EntryPath(r)
	return s.removeEntry(unix.AT_FDCWD, path, path)
}

// Dir is the level directory of one key hash, open for a run of reads and
// removals of that key's entries: each is one openat(2) or unlinkat(2)
// relative to it, without resolving the spool's path again. The writer
// reads and removes all pending entries of a key this way.
type Dir struct {
	s    *Spool
	fd   int
	hash uint64
	path string
}

// OpenDir opens the level directory that holds the entries of hash.
func (s *Spool) OpenDir(hash uint64) (*Dir, error) {
	b := make([]byte, 0, len(s.dir)+12)
	b = append(b, s.dir...)
	b = append(b, '/')
	b = s.layout.AppendDir(b, hash)
	path := string(b)
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("open spool directory %s: %w", path, err)
		}
		return &Dir{s: s, fd: fd, hash: hash, path: path}, nil
	}
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

// readEntry reads the entry name, relative to dirfd, whose full path is
// path, and checks it against r.
func (s *Spool) readEntry(dirfd int, name, path string, r Ref) (Entry, error) {
	data, err := s.readFile(dirfd, name, path)
	var notReg *notRegularError
	if errors.As(err, &notReg) {
		s.c.corrupt.Add(1)
		return Entry{}, &CorruptionError{Path: path, Reason: notReg.Error()}
	}
	if err != nil {
		s.c.readErrors.Add(1)
		return Entry{}, err
	}
	e, err := Decode(data)
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
	err := unix.Unlinkat(dirfd, name, 0)
	for err == unix.EINTR {
		err = unix.Unlinkat(dirfd, name, 0)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove spool entry %s: %w", path, err)
	}
	s.c.removed.Add(1)
	return nil
}

// readBufSize holds a typical entry (40 values) in one read.
const readBufSize = 2048

// readFile reads the regular file name relative to dirfd with raw system
// calls: no *os.File, no poller registration.
func (s *Spool) readFile(dirfd int, name, path string) ([]byte, error) {
	fd, err := s.openNoAtime(dirfd, name)
	if err != nil {
		return nil, fmt.Errorf("open spool entry %s: %w", path, err)
	}
	defer unix.Close(fd)
	buf := make([]byte, 0, readBufSize)
	for {
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return nil, fmt.Errorf("read spool entry %s: %w", path, err)
		case n == 0:
			return buf, nil
		}
		buf = buf[:len(buf)+n]
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// openNoAtime opens name read-only with O_NOATIME, falling back (and
// remembering to) when the kernel refuses it with EPERM. It never follows
// a symbolic link (ELOOP) and refuses what is not a regular file: a FIFO
// is opened non-blocking, so it cannot hang the reader.
func (s *Spool) openNoAtime(dirfd int, name string) (int, error) {
	const flags = unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOFOLLOW | unix.O_NONBLOCK
	for {
		fd, err := -1, error(nil)
		if s.noAtime.Load() {
			fd, err = unix.Openat(dirfd, name, flags|unix.O_NOATIME, 0)
			if err == unix.EPERM {
				s.noAtime.Store(false)
				s.c.noAtimeDenied.Add(1)
				continue
			}
		} else {
			fd, err = unix.Openat(dirfd, name, flags, 0)
		}
		if err == unix.EINTR {
			continue
		}
		if err == unix.ELOOP {
			return -1, &notRegularError{"a symbolic link (never followed)"}
		}
		if err != nil {
			return -1, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return -1, err
		}
		if st.Mode&unix.S_IFMT != unix.S_IFREG {
			unix.Close(fd)
			return -1, &notRegularError{fmt.Sprintf("not a regular file (file type %#o)", st.Mode&unix.S_IFMT)}
		}
		return fd, nil
	}
}

// notRegularError says a name where an entry should be is something else:
// the file is quarantined as corrupt, never read or followed.
type notRegularError struct{ what string }

func (e *notRegularError) Error() string { return e.what }
