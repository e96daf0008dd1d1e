package rrd

import (
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/fileutil"
)

// readHeader reads the RRD header of the file opened by the name open
// (path names it in errors) with the Go reader: an open, a shared fcntl
// lock like rrd_info_r's, posix_fadvise(RANDOM) so the read brings in only
// the pages asked for (no read-ahead), and one pread of a few KB. A
// missing file gives an error wrapping fs.ErrNotExist; a file the reader
// does not recognize, or cannot lock, one wrapping ErrHeaderUnknown.
func readHeader(path, open string) (FileInfo, error) {
	fd, err := openHeader(path, open)
	if err != nil {
		return FileInfo{}, err
	}
	defer unix.Close(fd)
	return readHeaderAt(fd, path)
}

// readHeaderAt is readHeader of the file open at fd, locked for reading.
func readHeaderAt(fd int, path string) (FileInfo, error) {
	var fi FileInfo
	bp := headBufs.Get().(*[]byte) // parseHeader keeps nothing of it
	defer headBufs.Put(bp)
	_, err := readHeadInto(fd, path, *bp, func(b []byte) (need int, err error) {
		fi, need, err = parseHeader(b)
		return need, err
	})
	return fi, err
}

// openHeader opens the file by the name open (path names it in errors) to
// read its header: read-only, with a shared fcntl lock like rrd_info_r's
// (a file librrd is writing waits), and posix_fadvise(RANDOM) so a read
// brings in only the pages asked for. The caller closes the descriptor.
func openHeader(path, open string) (int, error) {
	fd, err := openNoAtime(open)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if err := lockForRead(fd); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// lockForRead takes a shared fcntl lock of the file at fd, like
// rrd_info_r's (a file librrd is writing makes it fail: the caller hands
// the file to librrd, which waits or says why), and advises random reads
// so that a read brings in only the pages asked for.
func lockForRead(fd int) error {
	lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: 0}
	if err := unix.FcntlFlock(uintptr(fd), unix.F_SETLK, &lk); err != nil {
		return fmt.Errorf("%w: lock: %w", ErrHeaderUnknown, err)
	}
	_ = unix.Fadvise(fd, 0, 0, unix.FADV_RANDOM) // only a hint
	return nil
}

// readHead reads the start of the file at fd, size bytes first, then as
// many as parse says it needs, and returns them.
func readHead(fd int, path string, size int, parse func([]byte) (need int, err error)) ([]byte, error) {
	return readHeadInto(fd, path, make([]byte, size), parse)
}

// readHeadInto is readHead reading into buf first (a larger buffer is
// made if parse needs more).
func readHeadInto(fd int, path string, buf []byte, parse func([]byte) (need int, err error)) ([]byte, error) {
	for {
		n, err := fileutil.PreadFull(fd, buf, 0)
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		need, err := parse(buf[:n])
		switch {
		case err != nil:
			return nil, err
		case need <= n:
			return buf[:n], nil
		case n < len(buf): // the file ends inside the header
			return nil, fmt.Errorf("%w: %d bytes, header needs %d", ErrHeaderUnknown, n, need)
		}
		buf = make([]byte, need)
	}
}

// headerNoAtime opens RRD files to read their headers without updating
// their access times, while the kernel allows it.
var headerNoAtime fileutil.NoAtime

// openNoAtime opens the file by the name open (a /proc/self/fd name of a
// confined descriptor) read-only, with O_NOATIME where the kernel allows it
// (reading a header should not write its inode).
func openNoAtime(open string) (int, error) {
	return headerNoAtime.Openat(unix.AT_FDCWD, open, unix.O_RDONLY|unix.O_CLOEXEC)
}
