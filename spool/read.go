package spool

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Read reads and verifies the entry named r. A file that fails to decode,
// whose content does not match its name, or that can never be read as an
// entry (a symlink, a FIFO, a directory, a file without read permission, a
// file longer than any entry) gives a *CorruptionError carrying the path; the
// caller decides to Quarantine it. A missing entry gives an
// error wrapping fs.ErrNotExist. Reads use O_NOATIME where the kernel allows
// it (the file's owner or CAP_FOWNER), so reading the spool writes no inodes.
func (s *Spool) Read(r Ref) (Entry, error) {
	path := s.EntryPath(r)
	data, err := s.readFile(path)
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

// maxEntryLen is the length of the largest valid entry: a longer file is
// corrupt, and reading stops there instead of filling memory.
const maxEntryLen = headerLen + MaxKeyLen + MaxValues*(2+MaxValueNameLen+valuePayloadLen) + trailerLen

// readFile reads the entry file at path. It never follows a symlink
// (O_NOFOLLOW), never blocks on a FIFO or device (O_NONBLOCK, then fstat),
// and reads at most maxEntryLen+1 bytes. A file that is not a regular file,
// cannot be read for lack of permission, or is too long gives a
// *CorruptionError: it can never become a valid entry, so it goes to the
// quarantine rather than holding up its target's later entries.
func (s *Spool) readFile(path string) ([]byte, error) {
	f, err := s.openNoAtime(path)
	if err != nil {
		if reason, ok := unreadableReason(err); ok {
			return nil, &CorruptionError{Path: path, Reason: reason}
		}
		return nil, fmt.Errorf("open spool entry %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat spool entry %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, &CorruptionError{Path: path, Reason: "not a regular file: " + fileType(fi.Mode())}
	}
	if fi.Size() > maxEntryLen {
		return nil, &CorruptionError{Path: path, Offset: maxEntryLen, Reason: fmt.Sprintf("%d bytes, longer than the largest entry (%d)", fi.Size(), maxEntryLen)}
	}
	buf := make([]byte, 0, max(512, int(fi.Size())+1))
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > maxEntryLen {
			return nil, &CorruptionError{Path: path, Offset: maxEntryLen, Reason: fmt.Sprintf("longer than the largest entry (%d bytes)", maxEntryLen)}
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read spool entry %s: %w", path, err)
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
	}
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

func fileType(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "FIFO"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	case m&os.ModeSymlink != 0:
		return "symlink"
	}
	return m.Type().String()
}

// entryOpenFlags are the flags of every entry open: read-only, no symlink
// followed, no blocking on a FIFO.
const entryOpenFlags = os.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC

// openNoAtime opens path for reading with O_NOATIME, falling back (and
// remembering to) when the kernel refuses it with EPERM.
func (s *Spool) openNoAtime(path string) (*os.File, error) {
	if s.noAtime.Load() {
		f, err := os.OpenFile(path, entryOpenFlags|unix.O_NOATIME, 0)
		if !errors.Is(err, unix.EPERM) {
			return f, err
		}
		s.noAtime.Store(false)
		s.c.noAtimeDenied.Add(1)
	}
	return os.OpenFile(path, entryOpenFlags, 0)
}
