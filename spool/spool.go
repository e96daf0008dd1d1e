package spool

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/spoold/spoold/internal/fileutil"
	"github.com/spoold/spoold/internal/optcheck"
	"golang.org/x/sys/unix"
)

// Names of the fixed members of a spool directory.
const (
	TmpDir        = "tmp"
	QuarantineDir = "quarantine"
	LockFile      = "lock"
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
	// SegmentOpenFiles is how many open segments keep their descriptor
	// between appends (see append.go); beyond it the oldest held is
	// closed, and a segment without one is opened, appended to and closed
	// for each entry. 0 holds none. DefaultOptions gives 1,024.
	SegmentOpenFiles int
	// MemoryBytes bounds the memory that keeps the bytes this process
	// appended to segments until the writer reads them (memory.go), so
	// that it does not read them back from disk. 0 keeps none.
	// DefaultOptions gives 8 MiB: a few thousand keys' segments between
	// two writes, or a protocol client's burst. More buys a fleet no
	// measurable CPU (a segment read back is in the page cache) and
	// costs twice its size in RSS once Go's collector lets the heap grow.
	MemoryBytes int64
	// ReadOnly opens an existing spool for a dry run (`spoold load`):
	// Open creates and writes nothing (no directory, no lock file, no
	// pid, no marker; it still flocks the existing lock), the directory
	// must already be a spool, and Quarantine and RemoveStaleTemp refuse.
	// Write and Remove must not be called.
	ReadOnly bool
}

// Bounds of the segment limits.
const (
	MinSegmentBytes   = 4 << 10
	MaxSegmentBytes   = MaxSegmentLen
	MaxSegmentEntries = 1 << 20
	// MaxSegmentOpenFiles bounds Options.SegmentOpenFiles.
	MaxSegmentOpenFiles = 1 << 20
)

// DefaultOptions returns levels "1:2", the fsync policy none and segments
// of at most 1 MiB and 1,024 entries.
func DefaultOptions() Options {
	return Options{Levels: "1:2", Fsync: FsyncNone, SegmentMaxBytes: 1 << 20, SegmentMaxEntries: 1024, SegmentOpenFiles: 1024, MemoryBytes: 8 << 20}
}

// Validate reports the first option out of range, as a
// *optcheck.FieldError naming its field. Open calls it after filling in
// the defaults of zero segment limits; Validate itself takes them as they
// are.
func (o Options) Validate() error {
	bad := func(field, msg string) error {
		return fmt.Errorf("check spool options: %w", optcheck.Errorf(field, msg))
	}
	if _, err := ParseLevels(o.Levels); err != nil {
		return bad("Levels", err.Error())
	}
	switch {
	case o.Dir == "":
		return bad("Dir", "must not be empty")
	case o.SegmentMaxBytes < MinSegmentBytes || o.SegmentMaxBytes > MaxSegmentBytes:
		return bad("SegmentMaxBytes", "must be 4k to 64m")
	case o.SegmentMaxEntries < 1 || o.SegmentMaxEntries > MaxSegmentEntries:
		return bad("SegmentMaxEntries", fmt.Sprintf("must be 1 to %d", MaxSegmentEntries))
	case o.SegmentOpenFiles < 0 || o.SegmentOpenFiles > MaxSegmentOpenFiles:
		return bad("SegmentOpenFiles", fmt.Sprintf("must be 0 to %d", MaxSegmentOpenFiles))
	case o.MemoryBytes < 0:
		return bad("MemoryBytes", "must not be negative")
	}
	return nil
}

// withDefaults fills in the segment limits' defaults (for zero).
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.SegmentMaxBytes == 0 {
		o.SegmentMaxBytes = d.SegmentMaxBytes
	}
	if o.SegmentMaxEntries == 0 {
		o.SegmentMaxEntries = d.SegmentMaxEntries
	}
	return o
}

// Stats are the spool's counters since Open.
type Stats struct {
	Written       uint64 `json:"written"`        // entries published or appended
	WrittenBytes  uint64 `json:"written_bytes"`  // their encoded bytes
	WriteErrors   uint64 `json:"write_errors"`   // failed writes (nothing published)
	Read          uint64 `json:"read"`           // entries read and verified
	ReadErrors    uint64 `json:"read_errors"`    // reads that failed for another reason than corruption
	Corrupt       uint64 `json:"corrupt"`        // reads that found a corrupt entry
	Removed       uint64 `json:"removed"`        // entries removed after their values were applied
	Quarantined   uint64 `json:"quarantined"`    // files moved to quarantine/
	TempRemoved   uint64 `json:"temp_removed"`   // stale temp files of an earlier process removed
	TempForeign   uint64 `json:"temp_foreign"`   // files in tmp/ spoold did not make, left alone (at the last RemoveStaleTemp)
	Syncs         uint64 `json:"syncs"`          // syncfs(2) calls of the batch policy
	NoAtimeDenied uint64 `json:"noatime_denied"` // reads that could not use O_NOATIME (not the file's owner)
	// Segments: created by Append, entries Appended after the first of
	// their segment (to an open one, or with the first to a new one), closed
	// (sealed, full, or out of order), and read by ReadSegment.
	SegmentsCreated uint64 `json:"segments_created"`
	Appended        uint64 `json:"appended"`
	SegmentsClosed  uint64 `json:"segments_closed"`
	SegmentsRead    uint64 `json:"segments_read"`
	// SegmentOpens are the appends to an open segment that opened it by
	// name, its descriptor not held (more open segments than
	// Options.SegmentOpenFiles).
	SegmentOpens uint64 `json:"segment_opens"`
	// SegmentsFromMemory are the segments read from the memory of what
	// this process appended, not from disk; MemoryBytes is that memory.
	SegmentsFromMemory uint64 `json:"segments_from_memory"`
	MemoryBytes        int64  `json:"memory_bytes"`
	// SymlinksRefused counts the opens of spool files and level
	// directories refused because a symlink stood on the way (a level
	// directory swapped for one): see beneath.go.
	SymlinksRefused uint64 `json:"symlinks_refused"`
}

type counters struct {
	written, writtenBytes, writeErrors, read, readErrors, corrupt atomic.Uint64
	removed, quarantined, tempRemoved, syncs                      atomic.Uint64
	segmentsCreated, appended, segmentsClosed, segmentsRead       atomic.Uint64
	segmentsFromMemory, segmentOpens                              atomic.Uint64
	symlinksRefused                                               atomic.Uint64
	tempForeign                                                   atomic.Uint64 // a level, not a counter
}

// Spool is an open, locked spool directory.
type Spool struct {
	dir    string
	layout Levels
	fsync  FsyncPolicy
	log    *slog.Logger
	lock   *os.File // flocked; its fd also serves syncfs(2)
	// rootfd, tmpfd and qfd are the spool directory, tmp/ and quarantine/,
	// opened once without following symlinks (-1: not open); fixed members
	// are reached relative to them.
	rootfd, tmpfd, qfd int
	readOnly           bool
	// instance prefixes this process's temp files, so stale ones of an
	// earlier process can be told apart from writes in flight.
	instance string
	seq      atomic.Uint64
	noAtime  fileutil.NoAtime // entry reads without atime updates
	closed   atomic.Bool
	c        counters

	app           appender // open segments
	mem           memory   // their bytes, and those of closed segments not read yet
	segMaxBytes   int64
	segMaxEntries int
}

// ErrLocked is wrapped by Open's error when another process holds the spool.
var ErrLocked = errors.New("spool directory is locked by another process")

// Open creates (if needed) and locks the spool directory with flock(2). A
// second Open of the same directory, in this or another process, fails with
// an error wrapping ErrLocked that names the holder's pid.
//
// Open recognises its own spool before it creates anything: a non-empty
// directory without a marker (MarkerFile) that is not a spool made before
// the marker is refused, and so is a marker with other levels (see root.go
// for the rule). Every fixed member (lock, the marker, tmp/, quarantine/,
// the top level directories, and with PrecreateDirs every level directory)
// is opened without following a symlink: a symlink there is an error that
// names it and wraps ErrSymlink.
func Open(opts Options) (*Spool, error) {
	opts = opts.withDefaults()
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("open spool: %w", err)
	}
	layout, err := ParseLevels(opts.Levels)
	if err != nil {
		return nil, err
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if !opts.ReadOnly {
		if err := os.MkdirAll(opts.Dir, 0o750); err != nil {
			return nil, fmt.Errorf("open spool: create directory: %w", err)
		}
	}
	rootfd, err := fileutil.Openat(unix.AT_FDCWD, opts.Dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open spool %s: %w", opts.Dir, err)
	}
	if err := checkBeneath(rootfd, opts.Dir); err != nil {
		_ = unix.Close(rootfd)
		return nil, err
	}
	s := &Spool{
		dir: opts.Dir, layout: layout, fsync: opts.Fsync, log: logger,
		rootfd: rootfd, tmpfd: -1, qfd: -1, readOnly: opts.ReadOnly, instance: newInstance(),

		segMaxBytes:   opts.SegmentMaxBytes,
		segMaxEntries: opts.SegmentMaxEntries,
		app:           appender{perShard: (opts.SegmentOpenFiles + appendShards - 1) / appendShards},
		mem:           memory{max: opts.MemoryBytes},
	}
	if err := s.open(opts.PrecreateDirs); err != nil {
		_ = s.closeFiles()
		return nil, err
	}
	return s, nil
}

// open recognises, locks and completes the spool.
func (s *Spool) open(precreate bool) error {
	// Look before creating anything: a foreign directory stays as it was.
	_, first, err := s.recognise(s.readOnly)
	if err != nil {
		return err
	}
	if s.lock, err = s.lockDir(); err != nil {
		return err
	}
	// Again under the lock: another process may have been creating it.
	needMarker, _, err := s.recognise(s.readOnly)
	if err != nil {
		return err
	}
	if err := s.openMembers(); err != nil {
		return err
	}
	if needMarker && !s.readOnly {
		if err := s.writeMarker(); err != nil {
			return err
		}
		if first.entries == 0 {
			s.log.Info("created spool", "dir", s.dir, "levels", s.layout.String())
		} else {
			s.log.Info("adopted a spool made before the spool marker; marker written", "dir", s.dir, "marker", filepath.Join(s.dir, MarkerFile))
		}
	}
	if s.readOnly {
		return nil
	}
	return s.makeLevelDirs(precreate)
}

// openMembers creates (unless read-only) and opens tmp/ and quarantine/.
// A read-only spool without them has none to open.
func (s *Spool) openMembers() error {
	for _, m := range []struct {
		name string
		fd   *int
	}{{TmpDir, &s.tmpfd}, {QuarantineDir, &s.qfd}} {
		path := filepath.Join(s.dir, m.name)
		if !s.readOnly {
			if err := mkdirAt(s.rootfd, m.name, path); err != nil {
				return fmt.Errorf("open spool: %w", err)
			}
		}
		fd, err := openDirAt(s.rootfd, m.name, path)
		if s.readOnly && errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return err
		}
		*m.fd = fd
	}
	return nil
}

// maxPrecreatedDirs bounds the level directories Open creates up front.
const maxPrecreatedDirs = 1 << 16

// makeLevelDirs, when wanted, creates every level directory of a layout with at most
// maxPrecreatedDirs leaves, so that the first poll cycle after a fresh start
// creates files only (larger layouts create directories on demand). Each
// is created and opened relative to its parent, and one that is a symlink
// is an error.
func (s *Spool) makeLevelDirs(want bool) error {
	if !want || s.layout.LeafDirs() > maxPrecreatedDirs {
		return nil
	}
	return s.makeLevel(s.rootfd, s.dir, 0)
}

func (s *Spool) makeLevel(fd int, path string, level int) error {
	w := s.layout.Width(level)
	for i := 0; i < 1<<(4*w); i++ {
		name := fmt.Sprintf("%0*x", w, i)
		sub := path + "/" + name
		if err := mkdirAt(fd, name, sub); err != nil {
			return fmt.Errorf("create spool level directory: %w", err)
		}
		if level+1 == s.layout.Depth() {
			if err := checkDirAt(fd, name, sub); err != nil {
				return err
			}
			continue
		}
		subfd, err := openDirAt(fd, name, sub)
		if err != nil {
			return err
		}
		err = s.makeLevel(subfd, sub, level+1)
		if cerr := unix.Close(subfd); err == nil && cerr != nil {
			err = fmt.Errorf("close spool directory %s: %w", sub, cerr)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// lockDir takes the spool's lock: flock on a read-only descriptor of the
// lock file, which then holds the holder's pid. Holding no file open for
// writing lets an operator (or the kernel, errors=remount-ro) remount the
// spool read-only under a running daemon. The lock is opened without
// following a symlink and must be a regular file of one name (the pid
// written into a hard link would overwrite its other name's content).
func (s *Spool) lockDir() (*os.File, error) {
	path := filepath.Join(s.dir, LockFile)
	flags := unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
	if !s.readOnly {
		flags |= unix.O_CREAT
	}
	fd, err := fileutil.Openat(s.rootfd, LockFile, flags, 0o640)
	if err != nil {
		return nil, memberError(s.rootfd, LockFile, path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	st, err := checkLockFile(fd, s.rootfd, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		holder, _ := io.ReadAll(io.LimitReader(f, 32))
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock spool %s (held by pid %s): %w", s.dir, strings.TrimSpace(string(holder)), ErrLocked)
		}
		return nil, fmt.Errorf("lock spool %s: %w", path, err)
	}
	if !s.readOnly {
		if err := s.writePid(st); err != nil { // informational: a read-only spool still runs
			s.log.Warn("write pid to spool lock", "path", path, "err", err)
		}
	}
	return f, nil
}

// checkLockFile checks that the lock open as fd is a regular file of one
// name.
func checkLockFile(fd, rootfd int, path string) (unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return st, fmt.Errorf("stat spool lock %s: %w", path, err)
	}
	if err := wantType(rootfd, LockFile, path, st.Mode, unix.S_IFREG); err != nil {
		return st, err
	}
	if st.Nlink != 1 {
		return st, fmt.Errorf("open spool lock %s: it has %d names (hard links) and spoold writes its pid into it; make it a file of its own", path, st.Nlink)
	}
	return st, nil
}

// writePid writes this process's pid into the lock file, reopened for
// writing without following a symlink; it must still be the file locked
// (st), so nothing else is truncated.
func (s *Spool) writePid(locked unix.Stat_t) error {
	fd, err := fileutil.Openat(s.rootfd, LockFile, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Dev != locked.Dev || st.Ino != locked.Ino {
		return errors.New("the lock file was replaced after it was locked")
	}
	if err := unix.Ftruncate(fd, 0); err != nil {
		return err
	}
	return fileutil.WriteAll(fd, []byte(strconv.Itoa(os.Getpid())+"\n"))
}

// Close releases the lock. It is safe to call twice.
func (s *Spool) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.closeSegments()
	return s.closeFiles()
}

// closeFiles closes the lock and the spool's directories.
func (s *Spool) closeFiles() error {
	var err error
	if s.lock != nil {
		err = s.lock.Close()
	}
	for _, fd := range []int{s.qfd, s.tmpfd, s.rootfd} {
		if fd < 0 {
			continue
		}
		if cerr := unix.Close(fd); err == nil && cerr != nil {
			err = fmt.Errorf("close spool %s: %w", s.dir, cerr)
		}
	}
	return err
}

// Dir returns the spool directory.
func (s *Spool) Dir() string { return s.dir }

// Levels returns the spool's directory levels.
func (s *Spool) Levels() Levels { return s.layout }

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
		Syncs: c.syncs.Load(), NoAtimeDenied: s.noAtime.Denied(), TempForeign: c.tempForeign.Load(),
		SegmentsCreated: c.segmentsCreated.Load(), Appended: c.appended.Load(),
		SegmentsClosed: c.segmentsClosed.Load(), SegmentsRead: c.segmentsRead.Load(), SegmentOpens: c.segmentOpens.Load(),
		SegmentsFromMemory: c.segmentsFromMemory.Load(), MemoryBytes: s.mem.used.Load(),
		SymlinksRefused: c.symlinksRefused.Load(),
	}
}

// RemoveStaleTemp removes the temp files that earlier processes left in
// tmp/ when they died between writing and publishing an entry: such an entry
// was never acknowledged. It removes only regular files whose names spoold
// makes (see tempname.go) of another instance than this process's (its
// writes in flight); the spool lock guarantees no other live process writes
// here. Anything else in tmp/ is not spoold's: it is left alone, counted
// (Stats.TempForeign) and logged.
func (s *Spool) RemoveStaleTemp() (int, error) {
	dir := filepath.Join(s.dir, TmpDir)
	if s.readOnly || s.tmpfd < 0 {
		return 0, fmt.Errorf("remove stale temp files in %s: the spool is open read-only", dir)
	}
	names, err := readDirNames(s.tmpfd, dir)
	if err != nil {
		return 0, err
	}
	n := 0
	var foreign []string
	for _, name := range names {
		switch stale, err := s.staleTemp(name); {
		case err != nil:
			return n, err
		case stale == tempOwn, stale == tempGone:
			continue
		case stale == tempForeign:
			foreign = append(foreign, name)
			continue
		}
		if err := fileutil.Unlinkat(s.tmpfd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return n, fmt.Errorf("remove stale temp file %s: %w", filepath.Join(dir, name), err)
		}
		n++
		s.c.tempRemoved.Add(1)
	}
	if prev := s.c.tempForeign.Swap(uint64(len(foreign))); len(foreign) > 0 && prev != uint64(len(foreign)) {
		slices.Sort(foreign)
		s.log.Warn("left alone files in tmp/ that spoold did not make", "dir", dir, "files", len(foreign), "such as", foreign[:min(3, len(foreign))])
	}
	if n > 0 {
		s.log.Info("removed stale temp files of an earlier process", "dir", dir, "files", n)
	}
	return n, nil
}

// Kinds of names in tmp/.
const (
	tempStale   = iota // a temp file of an earlier process: removed
	tempOwn            // one of this process's: a write in flight
	tempForeign        // not spoold's: left alone
	tempGone           // removed meanwhile
)

// staleTemp classifies the name in tmp/.
func (s *Spool) staleTemp(name string) (int, error) {
	inst, ok := tempInstance(name)
	if !ok {
		return tempForeign, nil
	}
	if inst == s.instance {
		return tempOwn, nil
	}
	var st unix.Stat_t
	if err := unix.Fstatat(s.tmpfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return tempGone, nil
		}
		return 0, fmt.Errorf("stat temp file %s: %w", filepath.Join(s.dir, TmpDir, name), err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return tempForeign, nil
	}
	return tempStale, nil
}
