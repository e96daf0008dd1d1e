package rrd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// parentAt is the directory a new file is created in, by its descriptor,
// and the new file's base name.
type parentAt struct {
	fd   int
	dir  string // the directory's path, for errors
	base string
}

// open is the name librrd opens the directory's entry name by.
func (d parentAt) open(name string) string { return ProcPath(d.fd) + "/" + name }

func create(path string, d parentAt, l Layout, start int64) error {
	if err := l.Validate(); err != nil {
		return fmt.Errorf("create rrd %s: %w", path, err)
	}
	defs := make([]string, 0, len(l.DS)+len(l.RRAs))
	for _, d := range l.DS {
		defs = append(defs, d.Def())
	}
	for _, r := range l.RRAs {
		r = strings.TrimPrefix(r, "RRA:")
		if !strings.Contains(r, ":") {
			return fmt.Errorf("create rrd %s: bad RRA %q", path, "RRA:"+r)
		}
		defs = append(defs, "RRA:"+r)
	}
	tmp := TempName(d.base)
	if err := librrdCreate(d.open(tmp), uint64(l.Step/time.Second), start, nil, "", defs); err != nil {
		unix.Unlinkat(d.fd, tmp, 0)
		if err.Error() == "" {
			err = errors.New("librrd failed without a message")
		}
		// librrd says "Cannot create temporary file" without the
		// reason, or nothing when a write of the new file fails: the
		// file system's free space, then a probe of the directory, give
		// the system's error, so that a full disk or a directory spoold
		// may not write is reported as such.
		if nerr := NoSpace(d.open("."), l.FileSize()); nerr != nil {
			return fmt.Errorf("create rrd %s: %v: %w", path, err, nerr)
		}
		if perr := probeAt(d.fd); perr != nil {
			return fmt.Errorf("create rrd %s: %v: %w", path, err, perr)
		}
		return fmt.Errorf("create rrd %s: %w", path, err)
	}
	// librrd 1.7 reports success when writing the new file failed (a full
	// disk: it removes the file and returns 0); see missingAfterCreate.
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, tmp, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return missingAfterCreate(path, d.open("."), l, &fs.PathError{Op: "stat", Path: filepath.Join(d.dir, tmp), Err: err})
	}
	if err := d.publish(tmp, false); err != nil {
		return fmt.Errorf("create rrd %s: %w", path, err)
	}
	return nil
}

func createFrom(d parentAt, step uint64, lastUp int64, sources []string, template string, defs []string, replace bool) error {
	tmp := TempName(d.base)
	if err := librrdCreate(d.open(tmp), step, lastUp, sources, template, defs); err != nil {
		unix.Unlinkat(d.fd, tmp, 0)
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd, tmp, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("librrd reported success but wrote no file: %w", &fs.PathError{Op: "stat", Path: filepath.Join(d.dir, tmp), Err: err})
	}
	return d.publish(tmp, replace)
}

// publish makes the new file tmp readable by the owner's group (graphing
// tools) and no one else, and puts it at d.base: with link(2), which
// publishes the complete file and never replaces one, or with rename(2)
// when replace. tmp is gone after. Every name is relative to d's
// descriptor, and tmp is opened without following a symlink.
func (d parentAt) publish(tmp string, replace bool) error {
	fd, err := unix.Openat(d.fd, tmp, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == nil {
		err = unix.Fchmod(fd, 0o640)
		unix.Close(fd)
	}
	if err != nil {
		unix.Unlinkat(d.fd, tmp, 0)
		return &fs.PathError{Op: "chmod", Path: filepath.Join(d.dir, tmp), Err: err}
	}
	if replace {
		if err := unix.Renameat(d.fd, tmp, d.fd, d.base); err != nil {
			unix.Unlinkat(d.fd, tmp, 0)
			return &os.LinkError{Op: "rename", Old: filepath.Join(d.dir, tmp), New: filepath.Join(d.dir, d.base), Err: err}
		}
		return nil
	}
	err = unix.Linkat(d.fd, tmp, d.fd, d.base, 0)
	unix.Unlinkat(d.fd, tmp, 0)
	if err != nil {
		return &os.LinkError{Op: "link", Old: filepath.Join(d.dir, tmp), New: filepath.Join(d.dir, d.base), Err: err}
	}
	return nil
}

// ProbeCreate creates and removes a temp file (named as TempName names
// them) in the directory dir, and returns the system's error if it cannot.
func ProbeCreate(dir string) error {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(fd)
	return probeAt(fd)
}

// probeAt is ProbeCreate in the directory open at dirfd: the temp file is
// created beside nothing it could follow (O_EXCL|O_NOFOLLOW), relative to
// the descriptor.
func probeAt(dirfd int) error {
	name := TempName("spoold-probe")
	fd, err := unix.Openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	unix.Close(fd)
	if err := unix.Unlinkat(dirfd, name, 0); err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	return nil
}

// missingAfterCreate is the error for a create librrd reported as done
// though it left no file: with less free space than the file needs it
// wraps ENOSPC.
func missingAfterCreate(path, dir string, l Layout, statErr error) error {
	if err := NoSpace(dir, l.FileSize()); err != nil {
		return fmt.Errorf("create rrd %s: librrd wrote no file: %w", path, err)
	}
	return fmt.Errorf("create rrd %s: librrd reported success but wrote no file: %w", path, statErr)
}

// NoSpaceError says a file system lacks the room a new RRD file needs;
// it wraps ENOSPC.
type NoSpaceError struct {
	Free, Need int64 // bytes; Need 0: no free inode
}

// Detail says what is missing, without the ENOSPC text.
func (e *NoSpaceError) Detail() string {
	if e.Need == 0 {
		return "no free inode"
	}
	return fmt.Sprintf("%d bytes free, the file needs about %d", e.Free, e.Need)
}

func (e *NoSpaceError) Error() string { return e.Detail() + ": " + unix.ENOSPC.Error() }
func (e *NoSpaceError) Unwrap() error { return unix.ENOSPC }

// NoSpace returns a *NoSpaceError when dir's file system has less than
// need bytes free for spoold, or no free inode; nil when it has room or
// cannot say.
func NoSpace(dir string, need int64) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return nil
	}
	switch free := int64(st.Bavail) * st.Bsize; {
	case free < need:
		return &NoSpaceError{Free: free, Need: need}
	case st.Files > 0 && st.Ffree == 0:
		return &NoSpaceError{Free: free}
	}
	return nil
}
