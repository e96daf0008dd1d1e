package spool

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/fileutil"
)

// The fixed members of a spool (lock, SPOOLD, tmp/, quarantine/, the level
// directories) are reached relative to the spool directory's descriptor,
// one path component at a time, never through a symlink: a symlink at a
// fixed path would make spoold delete, overwrite or fill whatever it points
// to. The spool directory itself may be a symlink (an operator's choice of
// where the spool lives).

// ErrSymlink is wrapped by Open's error when a fixed member of the spool is
// a symbolic link.
var ErrSymlink = errors.New("is a symlink, and spoold follows no symlink at a spool's fixed paths")

// dirOpenFlags open a directory for reading without following a symlink.
const dirOpenFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// openDirAt opens the directory name relative to dirfd, whose path is path,
// without following a symlink.
func openDirAt(dirfd int, name, path string) (int, error) {
	fd, err := fileutil.Openat(dirfd, name, dirOpenFlags, 0)
	if err != nil {
		return -1, memberError(dirfd, name, path, err)
	}
	return fd, nil
}

// mkdirAt creates the directory name relative to dirfd; one that exists is
// no error (whether it is a directory is checked when it is opened).
func mkdirAt(dirfd int, name, path string) error {
	err := fileutil.Mkdirat(dirfd, name, 0o750)
	if err != nil && err != unix.EEXIST {
		return fmt.Errorf("create spool directory %s: %w", path, err)
	}
	return nil
}

// checkDirAt checks that name relative to dirfd is a directory, not a
// symlink to one.
func checkDirAt(dirfd int, name, path string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("stat spool directory %s: %w", path, err)
	}
	return wantType(dirfd, name, path, st.Mode, unix.S_IFDIR)
}

// wantType checks that a member of type mode (from fstatat without
// following) has the type want.
func wantType(dirfd int, name, path string, mode, want uint32) error {
	switch t := mode & unix.S_IFMT; {
	case t == want:
		return nil
	case t == unix.S_IFLNK:
		return symlinkError(dirfd, name, path)
	default:
		return fmt.Errorf("open spool member %s: is a %s, want a %s", path, fileutil.TypeName(t), fileutil.TypeName(want))
	}
}

// memberError explains a failed open of a fixed member: a symlink (ELOOP or
// ENOTDIR under O_NOFOLLOW) is named as one, with its target.
func memberError(dirfd int, name, path string, err error) error {
	var st unix.Stat_t
	if serr := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); serr == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return symlinkError(dirfd, name, path)
	}
	return fmt.Errorf("open spool member %s: %w", path, err)
}

func symlinkError(dirfd int, name, path string) error {
	buf := make([]byte, 4096)
	target := "?"
	if n, err := unix.Readlinkat(dirfd, name, buf); err == nil {
		target = string(buf[:n])
	}
	return fmt.Errorf("open spool member %s (a link to %q): %w; make it a real file or directory", path, target, ErrSymlink)
}

// readDirNames returns the names in the directory dirfd (whose path is
// path), through a descriptor of its own so that dirfd's offset is
// untouched.
func readDirNames(dirfd int, path string) ([]string, error) {
	fd, err := fileutil.Openat(dirfd, ".", dirOpenFlags, 0)
	if err != nil {
		return nil, fmt.Errorf("open directory %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	names, err := f.Readdirnames(-1)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("read directory %s: %w", path, err)
	}
	return names, nil
}
