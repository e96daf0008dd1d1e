package spool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/fileutil"
)

// Appending. The process that creates a segment is the only one that ever
// appends to it, and only until the segment is closed: when the writer
// takes the key (Seal), when it reaches Options.SegmentMaxBytes or
// SegmentMaxEntries, and at every start (open segments live in memory
// only, so a new process never appends to an old file). Each append is one
// write(2) of one framed entry to a descriptor opened with O_APPEND; a
// failed or short write is cut off again (ftruncate to the old length), and
// if even that fails the segment is closed, so no later entry follows the
// torn bytes.
//
// Descriptors. Up to Options.SegmentOpenFiles open segments keep their
// descriptor between appends (each of the 64 shards holds its share), so
// an append is one write, not an open through the level directories, a
// write and a close. A segment keeps the descriptor it got until it is
// closed; once a shard's share is taken, the segments after it open, append
// and close. The poller appends to every key once a cycle, in the same
// order: handing the oldest held descriptor to the newest segment instead
// would close each one just before its key's next append (none would ever
// be used twice once the keys outnumber the descriptors), where keeping
// them serves that share of the keys every cycle. Segments close when the
// writer takes their key, so the descriptors go round the keys over its
// write delay. Only this process
// removes or renames a segment it appends to, and only after Seal, which
// closes the descriptor; a held segment unlinked by someone else (an
// operator's rm) is found by fstat before each write (no links left) and
// treated as a segment that is gone, as a failed open is: nothing is
// written into a file no name reaches. The same fstat finds a held
// descriptor that is not the segment's any more (its device and inode
// differ: closed by a stray close elsewhere and its number reused), which
// is dropped without closing and the segment opened again by name.
//
// Names. A reader takes a key's segments by name (SealNames): until it
// gives them back (Unseal), a new segment of the key never gets one of
// those names, even once the reader removed that segment, so a name a
// reader holds always means the segment it sealed.

// ErrDuplicateTime is wrapped by Append's error for an entry whose key
// already has an entry of the same poll time (to the millisecond) in its
// open segment, or whose new segment's name (whole seconds) is taken.
var ErrDuplicateTime = errors.New("an entry of this key and second is already spooled")

// openSegment is a segment this process appends to.
type openSegment struct {
	ref     Ref
	size    int64 // bytes written and kept
	entries int
	last    PollTime // poll time of the newest entry
	fd      int      // the held descriptor, -1 if none
	dev     uint64   // the file the held descriptor was opened on
	ino     uint64
	mem     []byte // the bytes written, if kept in memory (memory.go)
}

// held reports whether seg keeps its descriptor between appends.
func (seg *openSegment) held() bool { return seg.fd >= 0 }

// appendShards is the number of locks open segments are spread over.
const appendShards = 64

type appendShardState struct {
	mu    sync.Mutex
	open  map[uint64]*openSegment
	nheld int // open segments with a held descriptor
	// taken are the names (first poll times) of the segments a reader
	// sealed to read and remove (SealNames), by hash, until Unseal.
	taken map[uint64][]int64
	enc   []byte // the entry being appended, encoded
}

type appendShard struct {
	appendShardState
	_ [cacheLinePad - unsafe.Sizeof(appendShardState{})%cacheLinePad]byte
}

// cacheLinePad keeps two shards' locks off one cache line.
const cacheLinePad = 64

type appender struct {
	shards   [appendShards]appendShard
	perShard int // descriptors each shard may hold
}

func (a *appender) shard(hash uint64) *appendShard {
	return &a.shards[(hash*0x9e3779b97f4a7c15)>>(64-6)]
}

// Append adds the entry to its key's open segment, or starts a new segment
// (a file named after the entry) when the key has none, the open one is
// full, or the entry is older than the open one's newest. created tells
// which: a new segment must be indexed (ref is its name); an entry appended
// to an open segment is covered by the segment's index entry. With
// FsyncAlways the data (and, for a new segment, its directory entry) is
// synced before Append returns. An entry of a second the key's open
// segment already has, or whose new segment's name exists, gives an error
// wrapping ErrDuplicateTime; nothing is written then.
func (s *Spool) Append(e *Entry) (ref Ref, created bool, err error) {
	ref, created, err = s.append(e)
	if err != nil {
		s.c.writeErrors.Add(1)
	}
	return ref, created, err
}

func (s *Spool) append(e *Entry) (Ref, bool, error) {
	hash := KeyHash(e.Key)
	sh := s.app.shard(hash)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	_, ref, created, err := s.appendRun(sh, hash, unsafe.Slice(e, 1))
	return ref, created, err
}

// AppendRun appends entries of one key, in their order, as Append would
// append each in turn, and each run of them that goes into one segment
// with one write(2): the updates of one file that a client sends together
// are one write. It stops at the first entry that Append would refuse (or
// of another key) and returns how many it appended, created with the
// names of the segments it started among them appended (each to be
// indexed, as Append's created says), and that entry's error.
func (s *Spool) AppendRun(es []Entry, created []Ref) (int, []Ref, error) {
	if len(es) == 0 {
		return 0, created, nil
	}
	hash := KeyHash(es[0].Key)
	sh := s.app.shard(hash)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	n := 0
	for n < len(es) {
		if es[n].Key != es[0].Key {
			s.c.writeErrors.Add(1)
			return n, created, fmt.Errorf("append a run of spool entries of %q: entry %d is of %q", es[0].Key, n, es[n].Key)
		}
		k, ref, isNew, err := s.appendRun(sh, hash, es[n:])
		if isNew {
			created = append(created, ref)
		}
		n += k
		if err != nil {
			s.c.writeErrors.Add(1)
			return n, created, err
		}
	}
	return n, created, nil
}

// appendRun appends es[0] and, in the same write, the entries after it
// that go into the same segment (same key, later poll times, within the
// segment's limits): the key's open segment, or a new one created with
// them. It returns how many it appended and the segment's name, and
// whether it is new. sh is locked.
func (s *Spool) appendRun(sh *appendShard, hash uint64, es []Entry) (int, Ref, bool, error) {
	e := &es[0]
	// Encoded into the shard's buffer: an append allocates nothing once
	// the buffer has grown to the entries' size.
	buf, err := e.AppendEncode(sh.enc[:0])
	if err != nil {
		return 0, Ref{}, false, err
	}
	sh.enc = buf
	seg := sh.open[hash]
	switch {
	case seg == nil:
	case e.PollTime() == seg.last:
		return 0, Ref{}, false, fmt.Errorf("append to spool segment %s: poll time %d.%03d: %w", s.EntryPath(seg.ref), e.Time, e.Milli, ErrDuplicateTime)
	case e.PollTime().Compare(seg.last) < 0, // the clock went back: a new segment keeps each in order
		seg.size+int64(len(buf)) > s.segMaxBytes,
		seg.entries >= s.segMaxEntries:
		s.closeOpen(sh, hash)
		seg = nil
	}
	var entries int
	var size int64
	if seg != nil {
		entries, size = seg.entries, seg.size
	}
	k, last := 1, e.PollTime()
	for ; k < len(es) && entries+k < s.segMaxEntries; k++ {
		x := &es[k]
		if x.Key != e.Key || x.PollTime().Compare(last) <= 0 {
			break
		}
		more, err := x.AppendEncode(buf)
		if err != nil || size+int64(len(more)) > s.segMaxBytes {
			break // appended on its own, or refused, by the next call
		}
		buf, last = more, x.PollTime()
	}
	sh.enc = buf
	if seg == nil {
		ref, fd, err := s.createFree(sh, Ref{Hash: hash, Time: e.Time}, buf)
		if err != nil {
			return 0, Ref{}, false, err
		}
		if sh.open == nil {
			sh.open = make(map[uint64]*openSegment)
		}
		seg = &openSegment{ref: ref, size: int64(len(buf)), entries: k, last: last, fd: -1}
		s.mem.drop(ref) // a segment of this name before is gone: O_EXCL created this one
		seg.mem = s.mem.grow(nil, buf, true)
		sh.open[hash] = seg
		if !s.hold(sh, seg, fd) {
			_ = unix.Close(fd) // written with write(2): nothing buffered to lose
		}
		s.c.segmentsCreated.Add(1)
		s.c.appended.Add(uint64(k - 1))
		s.count(k, len(buf))
		return k, ref, true, nil
	}
	if err := s.appendTo(sh, seg, buf, k); err != nil {
		return 0, Ref{}, false, err
	}
	seg.entries += k
	seg.last = last
	return k, seg.ref, false, nil
}

// count counts n entries of size bytes written.
func (s *Spool) count(n, size int) {
	s.c.written.Add(uint64(n))
	s.c.writtenBytes.Add(uint64(size))
}

// nameTries bounds how many seconds before its first entry a new segment's
// name may go when the name of its own second is taken.
const nameTries = 60

// createFree creates a segment for buf, whose first poll time is ref.Time,
// named ref or, when a segment of that second exists already (a restart
// within the second of the last poll, whose segment this process may not
// append to) or the name is taken by a reader (SealNames), the latest free
// second before it: a name is a lower bound of its entries' times. It
// returns the name used and the new segment's descriptor, open for
// appending. sh is locked.
func (s *Spool) createFree(sh *appendShard, ref Ref, buf []byte) (Ref, int, error) {
	taken := sh.taken[ref.Hash]
	for i := int64(0); i < nameTries && ref.Time-i >= 0; i++ {
		r := Ref{Hash: ref.Hash, Time: ref.Time - i}
		if slices.Contains(taken, r.Time) {
			continue
		}
		if fd, err := s.create(r, buf); !errors.Is(err, ErrDuplicateTime) {
			return r, fd, err
		}
	}
	return Ref{}, -1, fmt.Errorf("create spool segment %s: no free name in the %d seconds before: %w", s.EntryPath(ref), nameTries, ErrDuplicateTime)
}

// create writes buf as the first entries of a new segment ref and returns
// its descriptor, open for appending. The segment is created beneath the
// spool directory (beneath.go), and so is its level directory when it is
// missing.
func (s *Spool) create(ref Ref, buf []byte) (int, error) {
	rel := s.segmentRel(ref)
	const flags = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_APPEND | unix.O_NOFOLLOW
	fd, err := s.openBeneath(rel, flags, 0o640)
	if errors.Is(err, unix.ENOENT) {
		if merr := s.makeLevelDir(ref.Hash); merr != nil {
			return -1, fmt.Errorf("create spool level directory %s: %w", s.levelPath(ref.Hash), merr)
		}
		fd, err = s.openBeneath(rel, flags, 0o640)
	}
	if errors.Is(err, unix.EEXIST) {
		return -1, fmt.Errorf("create spool segment %s: %w", s.EntryPath(ref), ErrDuplicateTime)
	}
	if err != nil {
		return -1, fmt.Errorf("create spool segment %s: %w", s.EntryPath(ref), err)
	}
	err = fileutil.WriteAll(fd, buf)
	if err == nil && s.fsync == FsyncAlways {
		err = unix.Fdatasync(fd)
	}
	if err == nil && s.fsync == FsyncAlways {
		err = s.syncLevelDir(ref.Hash)
	}
	if err != nil {
		// Never acknowledged, and no other entry is in it: take it back.
		_ = unix.Close(fd)
		_ = s.unlinkSegment(ref)
		return -1, fmt.Errorf("write spool segment %s: %w", s.EntryPath(ref), err)
	}
	return fd, nil
}

// appendTo appends buf, n entries, to the open segment seg in one write;
// sh is locked. A failed write is cut off again; if that fails too, the
// segment is closed.
func (s *Spool) appendTo(sh *appendShard, seg *openSegment, buf []byte, n int) error {
	fd, err := s.segmentFD(sh, seg)
	if err != nil {
		s.forget(seg)                 // the file is the truth, whatever became of it
		s.closeOpen(sh, seg.ref.Hash) // gone or replaced: the next entry starts anew
		return err
	}
	held := seg.held() // a held descriptor is closed by closeOpen, if at all
	err = fileutil.WriteAll(fd, buf)
	if err == nil && s.fsync == FsyncAlways {
		err = unix.Fdatasync(fd)
	}
	if err != nil {
		s.forget(seg) // the reader reads the file, and finds what is torn
		if terr := unix.Ftruncate(fd, seg.size); terr != nil {
			err = fmt.Errorf("%w; cut the torn tail at %d: %w", err, seg.size, terr)
			s.closeOpen(sh, seg.ref.Hash)
		}
	}
	if !held {
		if cerr := unix.Close(fd); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("append to spool segment %s: %w", s.EntryPath(seg.ref), err)
	}
	seg.size += int64(len(buf))
	seg.mem = s.mem.grow(seg.mem, buf, false)
	s.count(n, len(buf))
	s.c.appended.Add(uint64(n))
	return nil
}

// Seal closes the open segment of hash, if this process has one: no entry
// is appended to it after Seal returns, so a reader that calls Seal first
// reads every entry the segment will ever hold. The writer seals a key
// before it reads the key's segments.
func (s *Spool) Seal(hash uint64) { s.SealNames(hash, nil) }

// SealNames is Seal for a reader that is about to read, and then remove,
// the segments of hash named by the poll times names: until Unseal(hash),
// no new segment of hash is given one of those names (it takes an earlier
// free second). A name is free again once its segment is removed, and a
// segment created under it meanwhile would be read as the one removed, or
// taken for it by whoever tracks the reader's names (the index holds them
// in flight until the reader is done, and a new segment's index entry
// would count as a duplicate and be forgotten with them). names must not
// change until Unseal.
func (s *Spool) SealNames(hash uint64, names []int64) {
	sh := s.app.shard(hash)
	sh.mu.Lock()
	s.closeOpen(sh, hash)
	if len(names) > 0 {
		if sh.taken == nil {
			sh.taken = make(map[uint64][]int64)
		}
		sh.taken[hash] = names
	}
	sh.mu.Unlock()
}

// Unseal gives back the names SealNames took for hash.
func (s *Spool) Unseal(hash uint64) {
	sh := s.app.shard(hash)
	sh.mu.Lock()
	delete(sh.taken, hash)
	sh.mu.Unlock()
}

// segmentFD returns a descriptor of the open segment seg to append to: its
// held one, or a new one opened beneath the spool directory by its name,
// which it holds if the shard has room. A held descriptor is checked
// first with fstat: a file no name reaches any more (removed by someone
// else) is refused as a missing one is; a descriptor that is no longer the
// file's (closed, or its number reused for another file, by a stray close
// elsewhere in the process) is forgotten, not closed, and the segment
// opened again by name. sh is locked.
func (s *Spool) segmentFD(sh *appendShard, seg *openSegment) (int, error) {
	if seg.held() {
		var st unix.Stat_t
		err := unix.Fstat(seg.fd, &st)
		switch {
		case err == nil && (st.Dev != seg.dev || st.Ino != seg.ino), errors.Is(err, unix.EBADF):
			s.log.Warn("the held descriptor of an open spool segment is not its file any more; opened again", "path", s.EntryPath(seg.ref), "fd", seg.fd, "err", err)
			s.unhold(sh, seg)
		case err != nil:
			return -1, fmt.Errorf("check open spool segment %s: %w", s.EntryPath(seg.ref), err)
		case st.Nlink == 0:
			return -1, fmt.Errorf("append to spool segment %s: removed while open: %w", s.EntryPath(seg.ref), os.ErrNotExist)
		default:
			return seg.fd, nil
		}
	}
	s.c.segmentOpens.Add(1)
	fd, err := s.openBeneath(s.segmentRel(seg.ref), unix.O_WRONLY|unix.O_APPEND|unix.O_NOFOLLOW, 0)
	if err != nil {
		return -1, fmt.Errorf("open spool segment %s for appending: %w", s.EntryPath(seg.ref), err)
	}
	s.hold(sh, seg, fd) // if not held, used once: appendTo closes it
	return fd, nil
}

// hold makes fd, a descriptor of seg's file, seg's held descriptor if the
// shard has room for one more, and reports whether it did; the caller
// closes one not held once it is done with it. sh is locked.
func (s *Spool) hold(sh *appendShard, seg *openSegment, fd int) bool {
	var st unix.Stat_t
	if sh.nheld >= s.app.perShard || unix.Fstat(fd, &st) != nil {
		return false
	}
	seg.fd, seg.dev, seg.ino = fd, st.Dev, st.Ino
	sh.nheld++
	return true
}

// release closes the held descriptor of hash's open segment, if any; the
// segment stays open (the next append opens it by name). sh is locked.
func (s *Spool) release(sh *appendShard, hash uint64) {
	seg := sh.open[hash]
	if seg == nil || !seg.held() {
		return
	}
	_ = unix.Close(seg.fd) // written with write(2): nothing buffered to lose
	s.unhold(sh, seg)
}

// unhold forgets seg's held descriptor without closing it. sh is locked.
func (s *Spool) unhold(sh *appendShard, seg *openSegment) {
	if !seg.held() {
		return
	}
	seg.fd = -1
	sh.nheld--
}

// closeOpen closes hash's open segment, if any: its descriptor is
// released and no entry is appended to it again. sh is locked.
func (s *Spool) closeOpen(sh *appendShard, hash uint64) {
	seg, ok := sh.open[hash]
	if !ok {
		return
	}
	if s.log.Enabled(context.Background(), slog.LevelDebug) {
		s.log.Debug("spool segment closed", "segment", seg.ref.String(), "bytes", seg.size, "entries", seg.entries, "last", seg.last.Sec, "held", seg.held())
	}
	s.release(sh, hash)
	delete(sh.open, hash)
	s.mem.keep(seg.ref, seg.mem)
	s.c.segmentsClosed.Add(1)
}

// forget drops the bytes of seg kept in memory: it is read from disk.
func (s *Spool) forget(seg *openSegment) {
	s.mem.release(seg.mem)
	seg.mem = nil
}

// closeSegments closes every open segment (Close).
func (s *Spool) closeSegments() {
	for i := range s.app.shards {
		sh := &s.app.shards[i]
		sh.mu.Lock()
		for hash := range sh.open {
			s.closeOpen(sh, hash)
		}
		sh.mu.Unlock()
	}
}
