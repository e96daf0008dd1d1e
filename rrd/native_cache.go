package rrd

import (
	"errors"
	"io/fs"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// HeaderCache keeps the parsed headers of the RRD files beneath a Root for
// native updates: at most a bound of them, the least recently used dropped
// first. Each batch opens the file beneath the Root's directory (Root.Open:
// a path that leads out of it at the moment of the open is refused with an
// *OutsideError, never written), read-write, for the batch only ( a descriptor held between
// batches would keep its file system from being remounted read-only, and
// a file replaced meanwhile from being noticed), checks that it is the
// inode whose header is kept (a file replaced, as rrdtool create or a
// restore does with a rename, is parsed afresh) and closes it after the
// batch. A file tuned or truncated in place is caught by the update
// itself, which reads the whole header under the lock and parses it again
// when its static part changed, and refuses a file shorter than its
// header says. HeaderCache of the same static header bytes (one profile's)
// share one parsed header (headerSet): a file without a kept header is
// read and compared, and parsed only if its kind is new; the buffers and
// arithmetic state of an update are reused from file to file, so that an
// update allocates nothing once warm. HeaderCache the native path does not handle are remembered by
// inode, size and mtime, so their headers are not read again until the
// file changes. Safe for concurrent use; a file is used by one update at
// a time (a second concurrent update of the same path parses it once
// more, and the lock decides). It starts no goroutines.
type HeaderCache struct {
	mu    sync.Mutex
	max   int
	kept  map[string]*cached
	lru   cached // the ring's anchor: next is the most recently used
	not   map[string]notNativeFile
	stats cacheCounters
	root  *Root // every file is opened beneath it
	known headerSet
	work  sync.Pool // of *File: buffers, stepper and rows, reused file after file
}

// cached is a kept header, in the ring of most recent use.
type cached struct {
	path       string
	h          *Header // shared by every file of the same static bytes (headerSet)
	p          *plan
	ino        fileID
	prev, next *cached
}

// fileID says which file a path named and how it looked.
type fileID struct {
	dev, ino uint64
	size     int64
	mtime    unix.Timespec
}

func idOf(st *unix.Stat_t) fileID {
	return fileID{dev: st.Dev, ino: st.Ino, size: st.Size, mtime: st.Mtim}
}

type notNativeFile struct {
	id  fileID
	err *NotNativeError
}

type cacheCounters struct {
	updates, applied, parses, replaced, evictions atomic.Uint64
	fallbacks                                     sync.Map // reason → *atomic.Uint64
}

// HeaderCacheStats are the counters of a HeaderCache.
type HeaderCacheStats struct {
	Headers   int               // parsed headers kept now
	Updates   uint64            // batches applied natively
	Applied   uint64            // updates (rows) they applied
	Parses    uint64            // files met without a kept header (first use, replaced, dropped)
	Replaced  uint64            // of those, files found replaced at their path
	Evictions uint64            // headers dropped to stay within the bound
	Fallbacks map[string]uint64 // batches left to librrd, by NotNativeError.Reason
}

// NewHeaderCache returns a cache of at most size parsed headers (at least 1) of
// the files beneath root. A nil root opens nothing (ErrNoRoot).
func NewHeaderCache(root *Root, size int) *HeaderCache {
	c := &HeaderCache{root: root, max: max(size, 1), kept: map[string]*cached{}, not: map[string]notNativeFile{}}
	c.lru.prev, c.lru.next = &c.lru, &c.lru
	return c
}

// Update applies rows to the file at path natively, as File.Update does.
// A *NotNativeError (nothing written) is counted by its reason: the
// caller then updates the file with librrd.
func (c *HeaderCache) Update(path string, template []string, rows []Sample) (int, error) {
	return c.UpdateAfter(path, template, rows, nil)
}

// UpdateAfter is Update calling opened, if not nil, with the file's
// descriptor once it is open and before anything of it is read: a caller
// asks the page cache for the pages the update will touch there
// (rrdwriter's prefetch) without opening the file once more, and gives
// the hint against read-ahead (FADV_RANDOM) itself if the file is not
// in the page cache; without opened, UpdateAfter gives it. opened must
// not close fd, nor move its offset.
//
// An update is an openat2, an fstat (the file's identity and size, as
// librrd's open stats it before its lock), the lock, a pread of the
// header, the pwrites and the close, which drops the lock.
func (c *HeaderCache) UpdateAfter(path string, template []string, rows []Sample, opened func(fd int)) (int, error) {
	return c.update(path, template, rows, nil, opened)
}

// UpdateFor is UpdateAfter of the rows rowsFor gives from the file's info,
// read by the update itself under its lock: the info and the update of a
// file the caller does not know yet in one open and one read of the
// header. rowsFor is called at most once; it is not called, and nothing is
// written, if the file cannot be opened, locked or read, or is one the
// native path does not handle (a *NotNativeError, counted as Update
// counts it): the caller learns the info some other way. Once it is
// called, the update goes on as UpdateAfter's with its rows: a
// *NotNativeError then (a value the native path does not parse as librrd
// would) means they are for librrd to apply.
func (c *HeaderCache) UpdateFor(path string, rowsFor RowsFor, opened func(fd int)) (int, error) {
	return c.update(path, nil, nil, rowsFor, opened)
}

func (c *HeaderCache) update(path string, template []string, rows []Sample, rowsFor RowsFor, opened func(fd int)) (int, error) {
	fd, err := c.root.Open(path, unix.O_RDWR)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	if opened != nil {
		opened(fd)
	} else {
		_ = unix.Fadvise(fd, 0, 0, unix.FADV_RANDOM) // a hint: no read-ahead
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	e, err := c.take(path, idOf(&st))
	if err != nil {
		c.countFallback(err)
		return 0, err
	}
	f, _ := c.work.Get().(*File)
	if f == nil {
		f = openedFile("", -1)
		f.hs = &c.known
	}
	f.path, f.fd, f.h, f.p, f.size, f.closing = path, fd, e.h, e.p, st.Size, true // closed by the defer above
	n, err := f.update(template, rows, rowsFor)
	e.h, e.p = f.h, f.p // e is this update's until put
	f.path, f.fd, f.size, f.closing = "", -1, -1, false
	c.work.Put(f)
	if n > 0 {
		c.stats.updates.Add(1)
		c.stats.applied.Add(uint64(n))
	}
	if err != nil && !c.failed(path, fd, n, err) {
		return n, err
	}
	c.put(e)
	return n, err
}

// failed counts an update of the file at path (open as fd) that gave err
// after applying n rows, and reports whether its header stays kept.
func (c *HeaderCache) failed(path string, fd, n int, err error) (keep bool) {
	var nn *NotNativeError
	switch {
	case errors.As(err, &nn) && (nn.Reason == ReasonValue || nn.Reason == ReasonTemplate):
		c.countFallback(err) // this batch's: the file stays native
		return true
	case errors.As(err, &nn):
		c.countFallback(err)
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil {
			c.remember(path, idOf(&st), nn)
		}
		return false
	}
	// An I/O error: parse it afresh next time.
	return errors.Is(err, ErrLocked) || n > 0 || isRefusal(err)
}

// take returns the kept header of the file id at path, or a new entry for
// it, out of the ring until put.
func (c *HeaderCache) take(path string, id fileID) (*cached, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := c.not[path]; ok {
		if n.id == id {
			return nil, n.err
		}
		delete(c.not, path)
	}
	e := c.kept[path]
	if e != nil {
		delete(c.kept, path)
		e.unlink()
		if e.ino.dev == id.dev && e.ino.ino == id.ino {
			return e, nil
		}
		c.stats.replaced.Add(1)
	}
	c.stats.parses.Add(1)
	if e == nil && len(c.kept) >= c.max {
		e = c.evict() // reused for path
	}
	if e == nil {
		e = new(cached)
	}
	*e = cached{path: path, ino: id}
	return e, nil
}

// put returns e to the cache as the most recently used.
func (c *HeaderCache) put(e *cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.kept[e.path]; ok { // a concurrent update parsed it too
		old.unlink()
	} else if len(c.kept) >= c.max {
		c.evict()
	}
	c.kept[e.path] = e
	e.prev, e.next = &c.lru, c.lru.next
	e.next.prev, c.lru.next = e, e
}

// evict drops the least recently used header and returns its entry.
func (c *HeaderCache) evict() *cached {
	e := c.lru.prev
	delete(c.kept, e.path)
	e.unlink()
	c.stats.evictions.Add(1)
	return e
}

func (e *cached) unlink() {
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next = nil, nil
}

func (c *HeaderCache) remember(path string, id fileID, err *NotNativeError) {
	c.mu.Lock()
	if len(c.not) >= 4*c.max { // a bound: forget them all rather than grow
		clear(c.not)
	}
	c.not[path] = notNativeFile{id: id, err: err}
	c.mu.Unlock()
}

func (c *HeaderCache) countFallback(err error) {
	var nn *NotNativeError
	if !errors.As(err, &nn) {
		return
	}
	v, _ := c.stats.fallbacks.LoadOrStore(nn.Reason, new(atomic.Uint64))
	v.(*atomic.Uint64).Add(1)
}

// Close drops every kept header; the cache stays usable.
func (c *HeaderCache) Close() error {
	c.mu.Lock()
	clear(c.kept)
	clear(c.not)
	c.lru.prev, c.lru.next = &c.lru, &c.lru
	c.mu.Unlock()
	c.known.mu.Lock()
	c.known.m = nil
	c.known.mu.Unlock()
	return nil
}

// Stats returns the counters.
func (c *HeaderCache) Stats() HeaderCacheStats {
	c.mu.Lock()
	kept := len(c.kept)
	c.mu.Unlock()
	s := HeaderCacheStats{
		Headers: kept, Updates: c.stats.updates.Load(), Applied: c.stats.applied.Load(),
		Parses: c.stats.parses.Load(), Replaced: c.stats.replaced.Load(), Evictions: c.stats.evictions.Load(),
		Fallbacks: map[string]uint64{},
	}
	c.stats.fallbacks.Range(func(k, v any) bool {
		s.Fallbacks[k.(string)] = v.(*atomic.Uint64).Load()
		return true
	})
	return s
}

// headerSet keeps the headers parsed, by their static bytes, so that files
// made from one profile (every file of a kind, in a daemon) share one
// parsed header and plan: a file met without a kept header is read, and
// compared, not parsed. At most maxKnownHeaders are kept (then all are
// forgotten rather than grow). Safe for concurrent use.
type headerSet struct {
	mu   sync.Mutex
	m    map[string]parsedHeader
	last atomic.Int64 // the header length last found: the size of a first read
}

type parsedHeader struct {
	h *Header
	p *plan
}

const maxKnownHeaders = 64

// find returns the header kept for the static bytes b starts with, if b
// holds them.
func (s *headerSet) find(b []byte) (*Header, *plan) {
	ds, rra, _, need, err := parseStatHead(b)
	if err != nil || need > len(b) {
		return nil, nil
	}
	if end := statHeadSize + ds*dsDefSize + rra*rraDefSize; end <= uint64(len(b)) {
		s.mu.Lock()
		k, ok := s.m[string(b[:end])]
		s.mu.Unlock()
		if ok {
			s.last.Store(k.h.headerLen)
			return k.h, k.p
		}
	}
	return nil, nil
}

// parse is ParseHeader(b) through s: the static bytes of a header seen
// before are compared, not parsed again. The header is shared: read only.
func (s *headerSet) parse(b []byte) (*Header, int, error) {
	if h, _ := s.find(b); h != nil {
		return h, int(h.liveOff), nil
	}
	h, need, err := ParseHeader(b)
	if h != nil {
		s.add(h, nil)
	}
	return h, need, err
}

// readHeaders keeps the headers of the Go readers (Info, ReadGeometry).
var readHeaders headerSet

func (s *headerSet) add(h *Header, p *plan) {
	s.mu.Lock()
	if len(s.m) >= maxKnownHeaders || s.m == nil {
		s.m = map[string]parsedHeader{}
	}
	s.m[string(h.raw)] = parsedHeader{h, p}
	s.mu.Unlock()
	s.last.Store(h.headerLen)
}
