package spool

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Read reads and verifies the entry named r. A file that fails to decode, or
// whose content does not match its name, gives a *CorruptionError carrying
// the path; the caller decides to Quarantine it. A missing entry gives an
// error wrapping fs.ErrNotExist. Reads use O_NOATIME where the kernel allows
// it (the file's owner or CAP_FOWNER), so reading the spool writes no inodes.
func (s *Spool) Read(r Ref) (Entry, error) {
	path := s.EntryPath(r)
	data, err := s.readFile(path)
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

func (s *Spool) readFile(path string) ([]byte, error) {
	f, err := s.openNoAtime(path)
	if err != nil {
		return nil, fmt.Errorf("open spool entry %s: %w", path, err)
	}
	defer f.Close()
	buf := make([]byte, 0, 512)
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
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

// openNoAtime opens path read-only with O_NOATIME, falling back (and
// remembering to) when the kernel refuses it with EPERM.
func (s *Spool) openNoAtime(path string) (*os.File, error) {
	if s.noAtime.Load() {
		f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOATIME|unix.O_CLOEXEC, 0)
		if !errors.Is(err, unix.EPERM) {
			return f, err
		}
		s.noAtime.Store(false)
		s.c.noAtimeDenied.Add(1)
	}
	return os.OpenFile(path, os.O_RDONLY|unix.O_CLOEXEC, 0)
}
