package fileutil

import (
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once the kernel answered openat2(2) with ENOSYS
// (before Linux 5.6): OpenBeneath walks instead from then on.
var noOpenat2 atomic.Bool

// OpenBeneath opens name, relative to the directory dirfd, with flags
// (O_CLOEXEC is added), resolving every component of name beneath dirfd
// and through no symlink, not even one swapped in after the caller looked:
// openat2(2) with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, retried on EINTR
// and on EAGAIN (a rename raced the resolution). On a kernel without
// openat2 it opens one component at a time with O_NOFOLLOW. A symlink on
// the way, or in place of the last component, gives ELOOP (with O_PATH and
// O_NOFOLLOW that one is opened, as openat2 does); an absolute name or a
// ".." leaving dirfd EXDEV.
// Errors are the bare errno: callers name the file.
func OpenBeneath(dirfd int, name string, flags int, mode uint32) (int, error) {
	return openat2(dirfd, name, flags, mode, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_SYMLINKS)
}

// OpenInside is OpenBeneath where symlinks that stay beneath dirfd are
// followed (RESOLVE_BENEATH|RESOLVE_NO_MAGICLINKS): one leading out gives
// EXDEV, a /proc magic link ELOOP. Without openat2 it refuses every
// symlink, as OpenBeneath does.
func OpenInside(dirfd int, name string, flags int, mode uint32) (int, error) {
	return openat2(dirfd, name, flags, mode, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_MAGICLINKS)
}

func openat2(dirfd int, name string, flags int, mode uint32, resolve uint64) (int, error) {
	if noOpenat2.Load() {
		return openWalk(dirfd, name, flags, mode)
	}
	how := unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Mode: uint64(mode), Resolve: resolve}
	for {
		fd, err := unix.Openat2(dirfd, name, &how)
		switch err {
		case unix.EINTR, unix.EAGAIN:
			continue
		case unix.ENOSYS:
			noOpenat2.Store(true)
			return openWalk(dirfd, name, flags, mode)
		}
		return fd, err
	}
}

// openWalk is OpenBeneath without openat2: each directory on the way is
// opened relative to the one before with O_PATH|O_NOFOLLOW|O_DIRECTORY (a
// symlink fails with ENOTDIR, reported as ELOOP), the last component
// with O_NOFOLLOW added to flags.
func openWalk(dirfd int, name string, flags int, mode uint32) (int, error) {
	if strings.HasPrefix(name, "/") {
		return -1, unix.EXDEV
	}
	at := dirfd
	defer func() {
		if at != dirfd {
			unix.Close(at)
		}
	}()
	for {
		seg, rest, more := strings.Cut(name, "/")
		switch {
		case seg == "..":
			return -1, unix.EXDEV
		case more && (seg == "" || seg == "."):
			name = rest
			continue
		case !more:
			if seg == "" {
				seg = "." // a name ending in "/"
			}
			fd, err := Openat(at, seg, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
			if err == unix.ENOTDIR && isSymlinkAt(at, seg) {
				err = unix.ELOOP
			}
			return fd, err
		}
		fd, err := Openat(at, seg, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.ENOTDIR && isSymlinkAt(at, seg) {
			err = unix.ELOOP
		}
		if err != nil {
			return -1, err
		}
		if at != dirfd {
			unix.Close(at)
		}
		at, name = fd, rest
	}
}

// isSymlinkAt reports whether name in dirfd is a symlink.
func isSymlinkAt(dirfd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}
