package rrd

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/fileutil"
)

// The native update path: an update of an RRD file in Go that writes the
// bytes librrd 1.7.2 (Debian's librrd8) writes for the same update, for
// the data source types GAUGE, COUNTER, DERIVE, ABSOLUTE, DCOUNTER,
// DDERIVE and COMPUTE (with the RPN operators native_rpn.go evaluates)
// and the archives AVERAGE, MIN, MAX and LAST, in files of format 0003 to
// 0005 made on this platform (64-bit, the machine's byte order). Every
// other file, and an update with a value it does not parse the way librrd
// would, gives a *NotNativeError before anything is written, and librrd
// does the update. The differential tests (native_test.go) hold it to
// librrd's bytes.
//
// An update, under librrd's lock, is: one pread of the header (the static
// part, compared with the one parsed: a file tuned since is parsed again;
// and the live head), the arithmetic in memory, one pwrite for each run of
// adjacent rows filled, then one pwrite of the whole live head. The rows
// go first: a crash before the head is written leaves the old head, under
// which the same updates are applied again and rewrite the same rows with
// the same values, and an update counts as applied exactly when its time
// is at or before the file's last update (docs/reliability.md says what a
// torn write of the head leaves).

// TimeOf returns the seconds and microseconds librrd takes from the time
// "<sec>" (milli 0) or "<sec>.<milli>" (three digits) of an update: it
// parses the decimal with its own parser and truncates to microseconds,
// so 811.123 may be kept as 811.122999.
func TimeOf(sec int64, milli uint16) (int64, int64) {
	if milli == 0 || milli > 999 {
		return sec, 0
	}
	b := strconv.AppendInt(make([]byte, 0, 24), sec, 10)
	b = append(b, '.', byte('0'+milli/100), byte('0'+milli/10%10), byte('0'+milli%10))
	v, ok := parseNumber(string(b))
	if !ok || v >= 1<<53 || v < 0 {
		return sec, 0
	}
	whole := int64(v) // v ≥ 0: truncation is floor
	return whole, int64((v - float64(whole)) * 1e6)
}

// ErrLocked is librrd's "could not lock RRD": someone else (rrdtool
// update or tune, rrdcached, another spoold) holds the file's lock.
var ErrLocked = errors.New("could not lock RRD")

// File is an RRD file open for native updates (HeaderCache opens and closes
// it for each batch; tests, with Open). It is not safe for
// concurrent use, and the caller serializes the updates of one file: the
// lock, librrd's, excludes other processes only.
type File struct {
	path string
	fd   int
	h    *Header
	p    *plan
	s    *stepper
	hs   *headerSet // nil: every header parsed
	buf  []byte     // the header read
	wbuf []byte     // rows being written
	// size is the file's size as the caller's fstat of fd saw it, or -1:
	// Update stats the file itself. closing says the caller closes fd
	// right after Update: the close drops the lock (a POSIX record lock
	// goes with the process's first close of the file), so Update does
	// not release it with a call of its own.
	size    int64
	closing bool

	// writeHead writes the live head; tests replace it to cut the write.
	writeHead func(fd int, b []byte, off int64) error
}

func openedFile(path string, fd int) *File {
	return &File{path: path, fd: fd, size: -1, writeHead: fileutil.PwriteAll}
}

// readHeader reads the whole header into f.buf (grown as needed) and
// parses its static part unless it is the one parsed already (or, with a
// headerSet, one parsed for another file); it returns the header's bytes.
func (f *File) readHeader() ([]byte, error) {
	size := rrdHeaderRead
	switch {
	case f.h != nil:
		size = int(f.h.headerLen)
	case f.hs != nil:
		size = max(size, int(f.hs.last.Load()))
	}
	for {
		if cap(f.buf) < size {
			f.buf = make([]byte, size)
		}
		n, err := fileutil.PreadFull(f.fd, f.buf[:size], 0)
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: f.path, Err: err}
		}
		b := f.buf[:n]
		if f.h != nil && f.h.sameStatic(b) && n >= int(f.h.headerLen) {
			return b, nil
		}
		if f.hs != nil {
			if h, p := f.hs.find(b); h != nil && n >= int(h.headerLen) {
				f.h, f.p = h, p
				return b, nil
			}
		}
		h, need, err := ParseHeader(b)
		if err != nil {
			return nil, err
		}
		if h != nil {
			need = int(h.headerLen)
		}
		if need <= n {
			p, err := newPlan(h)
			if err != nil {
				return nil, err
			}
			f.h, f.p = h, p
			if f.hs != nil {
				f.hs.add(h, p)
			}
			return b, nil
		}
		if n < size { // the file ends inside its header
			return nil, notNative(ReasonLayout, "%d bytes, the header needs %d", n, need)
		}
		size = need
	}
}

// Update applies rows in order, as Update(path, template, rows) does
// through librrd, and returns how many it applied. template, if not empty, names the data
// source of each value. An update at or before the file's last update
// stops the batch with librrd's error, the updates before it applied. A
// *NotNativeError means nothing was written: librrd is to apply the whole
// batch. A lock held by someone else gives an error wrapping ErrLocked.
func (f *File) Update(template []string, rows []Sample) (int, error) {
	return f.update(template, rows, nil)
}

// RowsFor gives the rows of an update from the file's info, read under the
// update's lock (HeaderCache.UpdateFor): in the file's data source order,
// or none. The update keeps none of them once it returns.
type RowsFor func(FileInfo) []Sample

// update is Update; with rowsFor it takes the rows (template nil) from
// rowsFor, called once, under the lock, with the header just read,
// before anything is written and after every check of the file that can
// give a *NotNativeError: so a NotNativeError with rowsFor not called
// means the file's info was not read either.
func (f *File) update(template []string, rows []Sample, rowsFor RowsFor) (int, error) {
	if err := f.lock(unix.F_WRLCK); err != nil {
		return 0, err
	}
	if !f.closing {
		defer f.lock(unix.F_UNLCK)
	}
	head, err := f.readHeader()
	if err != nil {
		return 0, err
	}
	size := f.size
	if size < 0 {
		var st unix.Stat_t
		if err := unix.Fstat(f.fd, &st); err != nil {
			return 0, &fs.PathError{Op: "stat", Path: f.path, Err: err}
		}
		size = st.Size
	}
	if size < f.h.fileLen {
		return 0, notNative(ReasonLayout, "%d bytes, the file should have %d", size, f.h.fileLen)
	}
	slots, err := f.slots(template)
	if err != nil {
		return 0, err
	}
	// The live head is changed in place in the buffer read.
	off, n := f.h.LiveRange()
	if f.s == nil || f.s.h != f.h {
		f.s = newStepper(f.h, f.p)
	}
	s := f.s
	s.reset(head[off : off+n])
	if err := s.l.check(); err != nil {
		return 0, err
	}
	if rowsFor != nil {
		if rows = rowsFor(f.h.fileInfo(head)); len(rows) == 0 {
			return 0, nil
		}
	}
	applied, refusal := 0, error(nil)
	for _, r := range rows {
		if len(r.Values) != len(slots) {
			return 0, notNative(ReasonValue, "%d values for %d data sources", len(r.Values), len(slots))
		}
		if r.Time < 0 || r.Milli > 999 {
			return 0, notNative(ReasonValue, "time %d.%03d", r.Time, r.Milli)
		}
		for i := range s.vals {
			s.vals[i] = "U"
		}
		for k, v := range r.Values {
			s.vals[slots[k]] = v
		}
		t, usec := TimeOf(r.Time, r.Milli)
		refused, err := s.apply(t, usec)
		if err != nil {
			return 0, err
		}
		if refused {
			refusal = illegalTime(f.path, t, s.l.lastUp())
			break
		}
		applied++
	}
	if applied > 0 {
		if err := f.write(s); err != nil {
			return 0, err
		}
	}
	return applied, refusal
}

// slots returns the data source each of an update's values goes to.
func (f *File) slots(template []string) ([]int, error) {
	if len(template) == 0 {
		return f.p.slots, nil
	}
	if len(template) > len(f.h.DS) {
		return nil, notNative(ReasonTemplate, "%d names for %d data sources", len(template), len(f.h.DS))
	}
	out := make([]int, len(template))
	for k, name := range template {
		i := slices.IndexFunc(f.h.DS, func(d DSDef) bool { return d.Name == name })
		if i < 0 || f.p.ds[i] == dsCompute || slices.Contains(out[:k], i) {
			return nil, notNative(ReasonTemplate, "template name %q", name)
		}
		out[k] = i
	}
	return out, nil
}

// write writes the rows s filled, then the live head in one pwrite.
func (f *File) write(s *stepper) error {
	ds := len(f.h.DS)
	rowLen := int64(ds) * valueSize
	for r := range s.runs {
		ra := &f.h.RRA[r]
		if s.runs[r].n == 0 {
			continue
		}
		start, vals := s.runs[r].last(ra.Rows, ds)
		// In ring order from start: up to the archive's end, then from
		// its first row.
		for len(vals) > 0 {
			n := min(uint64(len(vals)/ds), ra.Rows-start)
			f.wbuf = f.wbuf[:0]
			for _, v := range vals[:int(n)*ds] {
				f.wbuf = ne.AppendUint64(f.wbuf, math.Float64bits(v))
			}
			if err := fileutil.PwriteAll(f.fd, f.wbuf, f.h.rraStart[r]+int64(start)*rowLen); err != nil {
				return fmt.Errorf("write rows of %s: %w", f.path, err)
			}
			vals, start = vals[int(n)*ds:], 0
		}
	}
	off, _ := f.h.LiveRange()
	if err := f.writeHead(f.fd, s.l.b, off); err != nil {
		return fmt.Errorf("write the live head of %s: %w", f.path, err)
	}
	return nil
}

// lock takes (F_WRLCK) or releases (F_UNLCK) librrd's lock without
// waiting: a POSIX record lock (fcntl F_SETLK) on the whole file, write
// for an update. It excludes other processes (rrdtool update and tune,
// rrdcached) and is, like librrd's, the process's: it never conflicts with
// the read locks of this process's header readers (an open file
// description lock would, and fail the update while a graph reads the
// header), and it is dropped when any descriptor of the file in this
// process closes, as librrd's is; within the process the writer's lock
// per file keeps updates apart.
func (f *File) lock(typ int16) error {
	lk := unix.Flock_t{Type: typ, Whence: 0, Start: 0, Len: 0}
	for {
		err := unix.FcntlFlock(uintptr(f.fd), unix.F_SETLK, &lk)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN || err == unix.EACCES:
			return ErrLocked // librrd's words, without the path as librrd's
		case err != nil:
			return fmt.Errorf("lock %s: %w", f.path, err)
		}
		return nil
	}
}
