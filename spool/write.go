package spool

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/enum"
	"github.com/spoold/spoold/internal/fileutil"
)

// FsyncPolicy is the durability policy of Write. The trade-off is the one
// of ext4's commit= and data= mount options: every fsync costs a disk flush;
// without it a power loss (not a process crash) can lose the last seconds
// of entries. docs/spool-format.md discusses it.
type FsyncPolicy uint8

const (
	// FsyncNone never syncs: the kernel writes entries back on its own
	// schedule (ext4: commit=5s by default). A crash of spoold loses
	// nothing; a power loss may lose the entries of the last commit period.
	FsyncNone FsyncPolicy = iota
	// FsyncBatch syncs the whole spool file system once per Sync call (the
	// poller calls it once per cycle): one flush per batch.
	FsyncBatch
	// FsyncAlways fsyncs every entry and its directory before Write
	// returns: nothing acknowledged is ever lost, at one flush per entry.
	FsyncAlways
)

var fsyncNames = [...]string{"none", "batch", "always"}

func (p FsyncPolicy) String() string { return enum.Name(fsyncNames[:], "FsyncPolicy", int(p)) }

// ParseFsyncPolicy parses "none", "batch" or "always".
func ParseFsyncPolicy(s string) (FsyncPolicy, error) {
	i, err := enum.Parse(fsyncNames[:], "fsync policy", s)
	return FsyncPolicy(i), err
}

// Write publishes the entry atomically as a segment of one entry: it is
// encoded into a temp file in tmp/ and renamed into its level directory, so
// a reader sees the whole entry or nothing. This is how another process
// drops an entry into a spool; the poller appends (Append). A file of the
// same name is never replaced (it may be a segment of many entries): Write
// fails with an error wrapping ErrDuplicateTime. With FsyncAlways the file
// and its directory are synced before Write returns.
func (s *Spool) Write(e *Entry) (Ref, error) {
	ref, err := s.write(e)
	if err != nil {
		s.c.writeErrors.Add(1)
	}
	return ref, err
}

func (s *Spool) write(e *Entry) (Ref, error) {
	buf, err := e.AppendEncode(make([]byte, 0, e.EncodedLen()))
	if err != nil {
		return Ref{}, err
	}
	if s.tmpfd < 0 {
		return Ref{}, fmt.Errorf("write spool entry: the spool %s is open read-only", s.dir)
	}
	ref := e.Ref()
	tmp := s.tempName()
	if err := s.writeTemp(tmp, buf); err != nil {
		return Ref{}, err
	}
	if err := s.publish(tmp, ref); err != nil {
		_ = fileutil.Unlinkat(s.tmpfd, tmp, 0) // never acknowledged
		return Ref{}, err
	}
	s.count(1, len(buf))
	return ref, nil
}

// writeTemp creates the file name in tmp/ with the content buf.
func (s *Spool) writeTemp(name string, buf []byte) error {
	path := filepath.Join(s.dir, TmpDir, name)
	fd, err := fileutil.Openat(s.tmpfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o640)
	if err != nil {
		return fmt.Errorf("create spool temp file %s: %w", path, err)
	}
	err = fileutil.WriteAll(fd, buf)
	if err == nil && s.fsync == FsyncAlways {
		err = fileutil.Fsync(fd, path)
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		_ = fileutil.Unlinkat(s.tmpfd, name, 0)
		return fmt.Errorf("write spool temp file %s: %w", path, err)
	}
	return nil
}

// publish renames tmp (in tmp/) to the segment name of ref in its level
// directory, opened beneath the spool directory (and created on demand),
// and never replaces an existing file.
func (s *Spool) publish(tmp string, ref Ref) error {
	dst := s.EntryPath(ref)
	dfd, err := s.openLevelDir(ref.Hash, unix.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		if merr := s.makeLevelDir(ref.Hash); merr != nil {
			return fmt.Errorf("create spool level directory for %s: %w", dst, merr)
		}
		dfd, err = s.openLevelDir(ref.Hash, unix.O_RDONLY)
	}
	if err != nil {
		return fmt.Errorf("publish spool entry %s: %w", dst, err)
	}
	defer unix.Close(dfd)
	var b [MaxNameLen]byte
	err = fileutil.RenameNoReplace(s.tmpfd, tmp, dfd, string(ref.AppendName(b[:0])))
	if errors.Is(err, fs.ErrExist) {
		err = ErrDuplicateTime
	}
	if err != nil {
		return fmt.Errorf("publish spool entry %s: %w", dst, err)
	}
	if s.fsync == FsyncAlways {
		return fileutil.Fsync(dfd, s.levelPath(ref.Hash))
	}
	return nil
}

// Sync makes every entry written so far durable when the policy is
// FsyncBatch, with one syncfs(2) of the spool's file system. With the other
// policies it does nothing (none: by choice; always: already durable).
func (s *Spool) Sync() error {
	if s.fsync != FsyncBatch {
		return nil
	}
	s.c.syncs.Add(1)
	if err := fileutil.Syncfs(int(s.lock.Fd()), "spool "+s.dir); err != nil {
		return err
	}
	return nil
}
