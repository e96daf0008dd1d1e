package rrdwriter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"time"

	"github.com/spoold/spoold/internal/fileutil"
	"golang.org/x/sys/unix"
)

// The RRD header as librrd 1.x lays it out in memory and on disk
// (rrd_format.h), on a 64-bit (LP64) platform where unsigned long, time_t
// and long are 8 bytes and double is 8-byte aligned; byte order is the
// platform's. Offsets in bytes:
//
//	stat_head_t  0    cookie[4] "RRD\0"
//	             4    version[5] "0003\0", "0004\0" or "0005\0"
//	             9    7 bytes of padding
//	             16   float_cookie double = 8.642135E130 (checks the architecture)
//	             24   ds_cnt unsigned long
//	             32   rra_cnt unsigned long
//	             40   pdp_step unsigned long (seconds)
//	             48   par[10] unival                     → 128 bytes
//	ds_def_t     0    ds_nam[20] (NUL-terminated)
//	  × ds_cnt   20   dst[20] (NUL-terminated: COUNTER, GAUGE, ...)
//	             40   par[10] unival                     → 120 bytes each
//	rra_def_t    0    cf_nam[20], 4 bytes of padding
//	  × rra_cnt  24   row_cnt, 32 pdp_cnt unsigned long
//	             40   par[10] unival                     → 120 bytes each
//	live_head_t  0    last_up time_t, 8 last_up_usec long → 16 bytes
//
// Versions 0001 and 0002 keep a bare time_t instead of live_head_t; the
// reader leaves them (and anything else it does not recognize) to librrd.
// pdp_prep, cdp_prep, rra_ptr and the values follow; the reader does not
// need them.
const (
	rrdStatHeadSize = 128
	rrdDSDefSize    = 120
	rrdRRADefSize   = 120
	rrdLiveHeadSize = 16
	rrdNameSize     = 20
	rrdFloatCookie  = 8.642135e130
	// rrdMaxDefs bounds ds_cnt and rra_cnt so the header size cannot
	// overflow; real files have at most a few hundred of each.
	rrdMaxDefs = 1 << 20
	// rrdHeaderRead is the first read: enough for 67 data sources and
	// RRAs together (40 DS and 8 RRAs take 5,904 bytes).
	rrdHeaderRead = 8192
)

// errHeaderUnknown says the Go reader does not recognize the file; librrd
// decides what it is.
var errHeaderUnknown = errors.New("rrd header not recognized by the Go reader")

// parseHeader decodes the step, data sources and last update from the
// start of an RRD file. If b is too short it returns need > len(b) and no
// error: the header takes need bytes. A file it does not recognize gives
// an error wrapping errHeaderUnknown.
func parseHeader(b []byte) (fi FileInfo, need int, err error) {
	dsCnt, rraCnt, step, need, err := parseStatHead(b)
	if err != nil || need > len(b) {
		return FileInfo{}, need, err
	}
	live := rrdStatHeadSize + int(dsCnt)*rrdDSDefSize + int(rraCnt)*rrdRRADefSize
	need = live + rrdLiveHeadSize
	if len(b) < need {
		return FileInfo{}, need, nil
	}
	fi = FileInfo{Step: time.Duration(step) * time.Second, DS: make([]DSInfo, dsCnt)}
	for i := range fi.DS {
		d := b[rrdStatHeadSize+i*rrdDSDefSize:]
		name, ok1 := cString(d[:rrdNameSize])
		typ, ok2 := cString(d[rrdNameSize : 2*rrdNameSize])
		if !ok1 || !ok2 {
			return FileInfo{}, 0, fmt.Errorf("%w: data source %d has no name or type", errHeaderUnknown, i)
		}
		fi.DS[i] = DSInfo{Name: name, Type: DSType(typ)}
	}
	fi.Last = int64(binary.NativeEndian.Uint64(b[live:]))
	// librrd parses "<seconds>.<ms>" as a double and truncates its
	// fraction to microseconds, so 811.123 may be kept as 811.122999:
	// round to the millisecond the writer sent.
	fi.LastMilli = uint16(min((binary.NativeEndian.Uint64(b[live+8:])+500)/1000, 999))
	return fi, need, nil
}

// parseStatHead checks the static head at the start of b and returns the
// counts of data sources and RRAs and the step; need > len(b) (and no
// error) when b is too short to tell.
func parseStatHead(b []byte) (dsCnt, rraCnt, step uint64, need int, err error) {
	if strconv.IntSize != 64 {
		return 0, 0, 0, 0, fmt.Errorf("%w: not a 64-bit platform", errHeaderUnknown)
	}
	if len(b) < rrdStatHeadSize {
		return 0, 0, 0, rrdStatHeadSize, nil
	}
	ne := binary.NativeEndian
	switch {
	case string(b[0:4]) != "RRD\x00":
		return 0, 0, 0, 0, fmt.Errorf("%w: no RRD cookie", errHeaderUnknown)
	case string(b[4:9]) != "0003\x00" && string(b[4:9]) != "0004\x00" && string(b[4:9]) != "0005\x00":
		return 0, 0, 0, 0, fmt.Errorf("%w: version %q", errHeaderUnknown, b[4:9])
	case math.Float64frombits(ne.Uint64(b[16:])) != rrdFloatCookie:
		return 0, 0, 0, 0, fmt.Errorf("%w: float cookie of another architecture", errHeaderUnknown)
	}
	dsCnt, rraCnt, step = ne.Uint64(b[24:]), ne.Uint64(b[32:]), ne.Uint64(b[40:])
	if dsCnt == 0 || dsCnt > rrdMaxDefs || rraCnt == 0 || rraCnt > rrdMaxDefs || step == 0 || step > math.MaxInt32 {
		return 0, 0, 0, 0, fmt.Errorf("%w: %d data sources, %d RRAs, step %d", errHeaderUnknown, dsCnt, rraCnt, step)
	}
	return dsCnt, rraCnt, step, rrdStatHeadSize, nil
}

// cString returns the NUL-terminated, non-empty string at the start of b.
func cString(b []byte) (string, bool) {
	n := bytes.IndexByte(b, 0)
	if n <= 0 {
		return "", false
	}
	return string(b[:n]), true
}

// readHeader reads the RRD header at path with the Go reader: an open, a
// shared fcntl lock like rrd_info_r's, posix_fadvise(RANDOM) so the read
// brings in only the pages asked for (no read-ahead), and one pread of a
// few KB. A missing file gives an error wrapping fs.ErrNotExist; a file
// the reader does not recognize, or cannot lock, one wrapping
// errHeaderUnknown.
func readHeader(path string) (FileInfo, error) {
	fd, err := openHeader(path)
	if err != nil {
		return FileInfo{}, err
	}
	defer unix.Close(fd)
	var fi FileInfo
	_, err = readHead(fd, path, rrdHeaderRead, func(b []byte) (need int, err error) {
		fi, need, err = parseHeader(b)
		return need, err
	})
	return fi, err
}

// openHeader opens path to read its header: read-only, with a shared
// fcntl lock like rrd_info_r's (a file librrd is writing waits), and
// posix_fadvise(RANDOM) so a read brings in only the pages asked for.
func openHeader(path string) (int, error) {
	fd, err := openNoAtime(path)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: 0}
	if err := unix.FcntlFlock(uintptr(fd), unix.F_SETLK, &lk); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("%w: lock: %w", errHeaderUnknown, err)
	}
	_ = unix.Fadvise(fd, 0, 0, unix.FADV_RANDOM) // only a hint
	return fd, nil
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
		n, err := preadFull(fd, buf)
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
			return nil, fmt.Errorf("%w: %d bytes, header needs %d", errHeaderUnknown, n, need)
		}
		buf = make([]byte, need)
	}
}

// preadFull reads len(buf) bytes from offset 0, fewer only at end of file.
func preadFull(fd int, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := unix.Pread(fd, buf[n:], int64(n))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}

// headerNoAtime opens RRD files to read their headers without updating
// their access times, while the kernel allows it.
var headerNoAtime fileutil.NoAtime

// openNoAtime opens path read-only, with O_NOATIME where the kernel allows
// it (reading a header should not write its inode).
func openNoAtime(path string) (int, error) {
	return headerNoAtime.Openat(unix.AT_FDCWD, path, unix.O_RDONLY|unix.O_CLOEXEC)
}
