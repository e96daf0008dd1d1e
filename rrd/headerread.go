package rrd

import (
	"fmt"
	"io/fs"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/fileutil"
)

// readHeaderAt reads the RRD header of the file open at fd, locked for
// reading (path names it in errors), with the Go reader: one pread of a
// few KB. A file the reader does not recognize gives an error wrapping
// ErrHeaderUnknown.
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

// LockForRead takes a shared fcntl lock of the file at fd, like
// rrd_info_r's (a file librrd is writing makes it fail: the caller hands
// the file to librrd, which waits or says why), and advises random reads
// so that a read brings in only the pages asked for.
func LockForRead(fd int) error {
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
