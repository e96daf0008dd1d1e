// Package fileutil holds the file-system calls that the spool, the loader
// and the RRD writer share, as prometheus tsdb's fileutil does: opens
// relative to a directory (and confined beneath it: OpenBeneath) and reads
// retried on EINTR, the no-atime open that falls
// back once the kernel refuses it, unlink, rename without replacing,
// directory and file-system sync, and the names of file types. Each
// function is one system call's worth of policy; callers word the errors.
// One more is the rule for the files an operator names (ReadRegular):
// regular, bounded, never blocking, its errors naming the file.
// Package fileutil starts no goroutines.
package fileutil

import (
	"fmt"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Openat is openat(2) retried on EINTR. dirfd may be unix.AT_FDCWD.
func Openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// Mkdirat is mkdirat(2) retried on EINTR.
func Mkdirat(dirfd int, name string, mode uint32) error {
	for {
		if err := unix.Mkdirat(dirfd, name, mode); err != unix.EINTR {
			return err
		}
	}
}

// Read is read(2) retried on EINTR.
func Read(fd int, b []byte) (int, error) {
	for {
		n, err := unix.Read(fd, b)
		if err != unix.EINTR {
			return n, err
		}
	}
}

// ReadFull reads from fd until b is full or the end of the file: n < len(b)
// with a nil error is the end.
func ReadFull(fd int, b []byte) (int, error) {
	return fill(b, func(b []byte, _ int) (int, error) { return Read(fd, b) })
}

// PreadFull reads from fd at off until b is full or the end of the file:
// n < len(b) with a nil error is the end.
func PreadFull(fd int, b []byte, off int64) (int, error) {
	return fill(b, func(b []byte, done int) (int, error) {
		for {
			k, err := unix.Pread(fd, b, off+int64(done))
			if err != unix.EINTR {
				return k, err
			}
		}
	})
}

// fill calls read with the rest of b and how much of it is read until b is
// full, read fails, or it reads nothing (the end of the file).
func fill(b []byte, read func(rest []byte, done int) (int, error)) (int, error) {
	n := 0
	for n < len(b) {
		k, err := read(b[n:], n)
		if err != nil {
			return n, err
		}
		if k == 0 {
			break
		}
		n += k
	}
	return n, nil
}

// Unlinkat is unlinkat(2) retried on EINTR.
func Unlinkat(dirfd int, name string, flags int) error {
	for {
		if err := unix.Unlinkat(dirfd, name, flags); err != unix.EINTR {
			return err
		}
	}
}

// RenameNoReplace renames old (relative to olddirfd) to new (relative to
// newdirfd) unless new exists (EEXIST then); on a file system without
// RENAME_NOREPLACE it falls back to a plain renameat.
func RenameNoReplace(olddirfd int, old string, newdirfd int, new string) error {
	for {
		err := unix.Renameat2(olddirfd, old, newdirfd, new, unix.RENAME_NOREPLACE)
		switch err {
		case unix.EINTR:
			continue
		case unix.EINVAL, unix.ENOSYS:
			err = unix.Renameat(olddirfd, old, newdirfd, new)
			if err == unix.EINTR {
				continue
			}
		}
		return err
	}
}

// NoAtime opens files and directories for reading with O_NOATIME, so that
// reading the spool or an RRD header writes no inode, for as long as the
// kernel allows it (the file's owner or CAP_FOWNER); after the first EPERM
// it opens without, and Denied counts the refusals. The zero value is
// ready; it is safe for concurrent use.
type NoAtime struct {
	off    atomic.Bool
	denied atomic.Uint64
}

// Openat opens name relative to dirfd with flags, adding O_NOATIME while
// the kernel takes it.
func (n *NoAtime) Openat(dirfd int, name string, flags int) (int, error) {
	return n.open(dirfd, name, flags, Openat)
}

// OpenBeneath is Openat through OpenBeneath: name resolved beneath dirfd
// through no symlink.
func (n *NoAtime) OpenBeneath(dirfd int, name string, flags int) (int, error) {
	return n.open(dirfd, name, flags, OpenBeneath)
}

// OpenInside is Openat through OpenInside: name resolved beneath dirfd,
// symlinks inside it followed.
func (n *NoAtime) OpenInside(dirfd int, name string, flags int) (int, error) {
	return n.open(dirfd, name, flags, OpenInside)
}

func (n *NoAtime) open(dirfd int, name string, flags int, open func(int, string, int, uint32) (int, error)) (int, error) {
	for {
		f := flags
		if !n.off.Load() {
			f |= unix.O_NOATIME
		}
		fd, err := open(dirfd, name, f, 0)
		if err == unix.EPERM && f&unix.O_NOATIME != 0 {
			n.off.Store(true)
			n.denied.Add(1)
			continue
		}
		return fd, err
	}
}

// Denied returns how many opens the kernel refused O_NOATIME.
func (n *NoAtime) Denied() uint64 { return n.denied.Load() }

// Fsync is fsync(2) of fd, whose path is path (for the error), retried on
// EINTR.
func Fsync(fd int, path string) error {
	for {
		err := unix.Fsync(fd)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("fsync %s: %w", path, err)
		}
		return nil
	}
}

// SyncDir fsyncs the directory at path: a new or renamed name in it is
// durable after.
func SyncDir(path string) error {
	fd, err := Openat(unix.AT_FDCWD, path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open directory %s for fsync: %w", path, err)
	}
	err = Fsync(fd, path)
	unix.Close(fd)
	return err
}

// Syncfs writes back every dirty page of the file system that holds fd
// (syncfs(2)); path names it in the error.
func Syncfs(fd int, path string) error {
	if err := unix.Syncfs(fd); err != nil {
		return fmt.Errorf("syncfs %s: %w", path, err)
	}
	return nil
}

// WriteAll writes b to fd; a write that makes no progress is ENOSPC.
func WriteAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		case n == 0:
			return unix.ENOSPC
		}
		b = b[n:]
	}
	return nil
}

// PwriteAll writes b to fd at off; a write that makes no progress is
// ENOSPC.
func PwriteAll(fd int, b []byte, off int64) error {
	for len(b) > 0 {
		n, err := unix.Pwrite(fd, b, off)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return err
		case n == 0:
			return unix.ENOSPC
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}

// TypeName names the file type t (mode & S_IFMT, as from stat).
func TypeName(t uint32) string {
	switch t {
	case unix.S_IFREG:
		return "regular file"
	case unix.S_IFDIR:
		return "directory"
	case unix.S_IFIFO:
		return "FIFO"
	case unix.S_IFSOCK:
		return "socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "device"
	case unix.S_IFLNK:
		return "symlink"
	}
	return fmt.Sprintf("file type %#o", t)
}

// DirentTypeName names a directory entry's type (d_type from getdents):
// a d_type is the file type bits of a mode shifted down (DT_FIFO is
// S_IFIFO>>12), so it is TypeName's name; DT_UNKNOWN is "d_type 0".
func DirentTypeName(t uint8) string {
	if t == unix.DT_UNKNOWN {
		return "d_type 0"
	}
	return TypeName(uint32(t) << 12)
}
