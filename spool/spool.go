package spool

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Names of the fixed members of a spool directory.
const (
	TmpDir        = "tmp"
	QuarantineDir = "quarantine"
	LockFile      = "lock"
	reasonSuffix  = ".reason"
)

// Options configure a Spool.
type Options struct {
	// Dir is the spool directory; it is created if missing.
	Dir string
	// Levels is the directory layout in nginx's form, e.g. "1:2".
	Levels string
	// Fsync is the durability policy of Write; see FsyncPolicy.
	Fsync FsyncPolicy
	// Logger receives quarantine and clean-up messages; nil discards them.
	Logger *slog.Logger
	// PrecreateDirs makes Open create every level directory (for layouts
	// of at most 65,536 leaves), so the first poll cycle of a fresh spool
	// creates files only. Otherwise directories are created on demand.
	PrecreateDirs bool
	// SegmentMaxBytes and SegmentMaxEntries close an open segment (Append
	// starts a new one) before it would exceed either. Defaults 1 MiB and
	// 1,024 entries; SegmentMaxEntries 1 publishes one file per entry.
	SegmentMaxBytes   int64
	SegmentMaxEntries int
}

// Bounds of the segment limits.
const (
	MinSegmentBytes = 4 << 10
	MaxSegmentBytes = MaxSegmentLen
)

// DefaultOptions returns levels "1:2", the fsync policy none and segments
// of at most 1 MiB and 1,024 entries.
func DefaultOptions() Options {
	return Options{Levels: "1:2", Fsync: FsyncNone, SegmentMaxBytes: 1 << 20, SegmentMaxEntries: 1024}
}

// checkSegments fills in the segment limits' defaults (for zero) and
// checks their bounds.
func (o *Options) checkSegments() error {
	d := DefaultOptions()
	if o.SegmentMaxBytes == 0 {
		o.SegmentMaxBytes = d.SegmentMaxBytes
	}
	if o.SegmentMaxEntries == 0 {
		o.SegmentMaxEntries = d.SegmentMaxEntries
	}
	switch {
	case o.SegmentMaxBytes < MinSegmentBytes || o.SegmentMaxBytes > MaxSegmentBytes:
		return fmt.Errorf("open spool: segment size limit %d not in %d..%d bytes", o.SegmentMaxBytes, MinSegmentBytes, MaxSegmentBytes)
	case o.SegmentMaxEntries < 1 || o.SegmentMaxEntries > 1<<20:
		return fmt.Errorf("open spool: segment entry limit %d not in 1..%d", o.SegmentMaxEntries, 1<<20)
	}
	return nil
}

// Stats are the spool's counters since Open.
type Stats struct {
	Written       uint64 // entries published or appended
	WrittenBytes  uint64 // their encoded bytes
	WriteErrors   uint64 // failed writes (nothing published)
	Read          uint64 // entries read and verified
	ReadErrors    uint64 // reads that failed for another reason than corruption
	Corrupt       uint64 // reads that found a corrupt entry
	Removed       uint64 // entries removed after their values were applied
	Quarantined   uint64 // files moved to quarantine/
	TempRemoved   uint64 // stale temp files of an earlier process removed
	Syncs         uint64 // syncfs(2) calls of the batch policy
	NoAtimeDenied uint64 // reads that could not use O_NOATIME (not the file's owner)
	// Segments: created by Append, entries Appended to an open one, closed
	// (sealed, full, or out of order), and read by ReadSegment.
	SegmentsCreated, Appended, SegmentsClosed, SegmentsRead uint64
}

type counters struct {
	written, writtenBytes, writeErrors, read, readErrors, corrupt atomic.Uint64
	removed, quarantined, tempRemoved, syncs, noAtimeDenied       atomic.Uint64
	segmentsCreated, appended, segmentsClosed, segmentsRead       atomic.Uint64
}

// Spool is an open, locked spool directory.
type Spool struct {
	dir    string
	layout Layout
	fsync  FsyncPolicy
	log    *slog.Logger
	lock   *os.File // flocked; its fd also serves syncfs(2)
	// instance prefixes this process's temp files, so stale ones of an
	// earlier process can be told apart from writes in flight.
	instance string
	seq      atomic.Uint64
	noAtime  atomic.Bool // false once O_NOATIME was refused
	closed   atomic.Bool
	c        counters

	app           appender // open segments
	segMaxBytes   int64
	segMaxEntries int
}

// ErrLocked is wrapped by Open's error when another process holds the spool.
var ErrLocked = errors.New("spool directory is locked by another process")

// Open creates (if needed) and locks the spool directory with flock(2). A
// second Open of the same directory, in this or another process, fails with
// an error wrapping ErrLocked that names the holder's pid.
func Open(opts Options) (*Spool, error) {
	layout, err := ParseLevels(opts.Levels)
	if err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		return nil, errors.New("open spool: no directory given")
	}
	if err := opts.checkSegments(); err != nil {
		return nil, err
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	for _, d := range []string{opts.Dir, filepath.Join(opts.Dir, TmpDir), filepath.Join(opts.Dir, QuarantineDir)} {
		if err := os.MkdirAll(d, 0o750); err != nil {
			return nil, fmt.Errorf("open spool: create directory: %w", err)
		}
	}
	lock, err := lockDir(opts.Dir)
	if err != nil {
		return nil, err
	}
	if err := makeLevelDirs(opts.Dir, layout, opts.PrecreateDirs); err != nil {
		lock.Close()
		return nil, err
	}
	s := &Spool{
		dir:      opts.Dir,
		layout:   layout,
		fsync:    opts.Fsync,
		log:      logger,
		lock:     lock,
		instance: fmt.Sprintf("%d.%x.", os.Getpid(), time.Now().UnixNano()),

		segMaxBytes:   opts.SegmentMaxBytes,
		segMaxEntries: opts.SegmentMaxEntries,
	}
	s.noAtime.Store(true)
	return s, nil
}

// maxPrecreatedDirs bounds the level directories Open creates up front.
const maxPrecreatedDirs = 1 << 16

// makeLevelDirs, when wanted, creates every level directory of a layout with at most
// maxPrecreatedDirs leaves, so that the first poll cycle after a fresh start
// creates files only (larger layouts create directories on demand).
func makeLevelDirs(dir string, l Layout, want bool) error {
	if !want || l.LeafDirs() > maxPrecreatedDirs {
		return nil
	}
	var mk func(path string, level int) error
	mk = func(path string, level int) error {
		if level == l.Levels() {
			return nil
		}
		for i := 0; i < 1<<(4*l.Width(level)); i++ {
			sub := filepath.Join(path, fmt.Sprintf("%0*x", l.Width(level), i))
			if err := os.Mkdir(sub, 0o750); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("create spool level directory: %w", err)
			}
			if err := mk(sub, level+1); err != nil {
				return err
			}
		}
		return nil
	}
	return mk(dir, 0)
}

// lockDir takes the spool's lock: flock on a read-only descriptor of the
// lock file, which then holds the holder's pid. Holding no file open for
// writing lets an operator (or the kernel, errors=remount-ro) remount the
// spool read-only under a running daemon.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|unix.O_CLOEXEC, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open spool lock %s: %w", path, err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder, _ := io.ReadAll(io.LimitReader(f, 32))
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock spool %s (held by pid %s): %w", dir, strings.TrimSpace(string(holder)), ErrLocked)
		}
		return nil, fmt.Errorf("lock spool %s: %w", path, err)
	}
	_ = os.WriteFile(path, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o640) // informational
	return f, nil
}

// Close releases the lock. It is safe to call twice.
func (s *Spool) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return s.lock.Close()
}

// Dir returns the spool directory.
func (s *Spool) Dir() string { return s.dir }

// Layout returns the directory layout.
func (s *Spool) Layout() Layout { return s.layout }

// Logger returns the logger the spool was opened with.
func (s *Spool) Logger() *slog.Logger { return s.log }

// EntryPath returns the path of the entry named r.
func (s *Spool) EntryPath(r Ref) string {
	b := make([]byte, 0, len(s.dir)+12+MaxNameLen)
	b = append(b, s.dir...)
	b = append(b, '/')
	b = s.layout.AppendDir(b, r.Hash)
	b = append(b, '/')
	b = r.AppendName(b)
	return string(b)
}

// Stats returns a snapshot of the counters.
func (s *Spool) Stats() Stats {
	c := &s.c
	return Stats{
		Written: c.written.Load(), WrittenBytes: c.writtenBytes.Load(), WriteErrors: c.writeErrors.Load(),
		Read: c.read.Load(), ReadErrors: c.readErrors.Load(), Corrupt: c.corrupt.Load(),
		Removed: c.removed.Load(), Quarantined: c.quarantined.Load(), TempRemoved: c.tempRemoved.Load(),
		Syncs: c.syncs.Load(), NoAtimeDenied: c.noAtimeDenied.Load(),
		SegmentsCreated: c.segmentsCreated.Load(), Appended: c.appended.Load(),
		SegmentsClosed: c.segmentsClosed.Load(), SegmentsRead: c.segmentsRead.Load(),
	}
}

// Quarantine moves the file at path (inside the spool) to quarantine/, next
// to a .reason file that says why, logs the reason and counts it. The file
// is never deleted. It returns the new path.
func (s *Spool) Quarantine(path, reason string) (string, error) {
	base := filepath.Base(path)
	dst := filepath.Join(s.dir, QuarantineDir, fmt.Sprintf("%s.%d", base, time.Now().UnixNano()))
	if err := os.Rename(path, dst); err != nil {
		return "", fmt.Errorf("quarantine %s: %w", path, err)
	}
	s.writeReason(dst, fmt.Sprintf("time: %s\nfrom: %s\nreason: %s\n", time.Now().UTC().Format(time.RFC3339), path, reason))
	s.c.quarantined.Add(1)
	s.log.Warn("quarantined spool file", "from", path, "to", dst, "reason", reason)
	return dst, nil
}

// writeReason writes the .reason file of the quarantined file dst.
func (s *Spool) writeReason(dst, note string) {
	if err := os.WriteFile(dst+reasonSuffix, []byte(note), 0o640); err != nil {
		s.log.Warn("write quarantine reason", "path", dst+reasonSuffix, "err", err)
	}
}

// RemoveStaleTemp removes the temp files that earlier processes left in
// tmp/ when they died between writing and publishing an entry: such an entry
// was never acknowledged. Temp files of this process (writes in flight) are
// left alone; the spool lock guarantees no other live process writes here.
func (s *Spool) RemoveStaleTemp() (int, error) {
	dir := filepath.Join(s.dir, TmpDir)
	names, err := readNames(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		if strings.HasPrefix(name, s.instance) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return n, fmt.Errorf("remove stale temp file: %w", err)
		}
		n++
		s.c.tempRemoved.Add(1)
	}
	if n > 0 {
		s.log.Info("removed stale temp files of an earlier process", "dir", dir, "files", n)
	}
	return n, nil
}

func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("open directory %s: %w", dir, err)
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("read directory %s: %w", dir, err)
	}
	return names, nil
}
