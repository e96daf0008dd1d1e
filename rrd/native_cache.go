package rrd

import (
	"container/list"
	"errors"
	"io/fs"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Files keeps the parsed headers of RRD files for native updates: at most
// a bound of them, the least recently used dropped first. Each batch opens
// the file (read-write, for the batch only: a descriptor held between
// batches would keep its file system from being remounted read-only, and
// a file replaced meanwhile from being noticed), checks that it is the
// inode whose header is kept (a file replaced, as rrdtool create or a
// restore does with a rename, is parsed afresh) and closes it after the
// batch. A file tuned or truncated in place is caught by the update
// itself, which reads the whole header under the lock and parses it again
// when its static part changed, and refuses a file shorter than its
// header says. Files the native path does not handle are remembered by
// inode, size and mtime, so their headers are not read again until the
// file changes. Safe for concurrent use; a file is used by one update at
// a time (a second concurrent update of the same path parses it once
// more, and the lock decides). It starts no goroutines.
type Files struct {
	mu    sync.Mutex
	max   int
	kept  map[string]*list.Element // of *cached, in lru
	lru   list.List                // front: the most recently used
	not   map[string]notNativeFile
	stats filesCounters
	root  *Root // nil: files opened by their path as it is
}

// Beneath makes c open every file beneath r's directory (Root.Open), so a
// path that leads out of it at the moment of the open is refused
// (*OutsideError) and never written. Call it before the first Update.
func (c *Files) Beneath(r *Root) { c.root = r }

type cached struct {
	path string
	f    *File // its descriptor open only during a batch
	ino  fileID
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

type filesCounters struct {
	updates, applied, parses, replaced, evictions atomic.Uint64
	fallbacks                                     sync.Map // reason → *atomic.Uint64
}

// FilesStats are the counters of a Files.
type FilesStats struct {
	Headers   int               // parsed headers kept now
	Updates   uint64            // batches applied natively
	Applied   uint64            // updates (rows) they applied
	Parses    uint64            // files met without a kept header (first use, replaced, dropped)
	Replaced  uint64            // of those, files found replaced at their path
	Evictions uint64            // headers dropped to stay within the bound
	Fallbacks map[string]uint64 // batches left to librrd, by NotNativeError.Reason
}

// NewFiles returns a cache of at most size parsed headers (at least 1).
func NewFiles(size int) *Files {
	return &Files{max: max(size, 1), kept: map[string]*list.Element{}, not: map[string]notNativeFile{}}
}

// Update applies rows to the file at path natively, as File.Update does.
// A *NotNativeError (nothing written) is counted by its reason: the
// caller then updates the file with librrd.
func (c *Files) Update(path string, template []string, rows []Row) (int, error) {
	fd, err := c.open(path)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	e, err := c.take(path, idOf(&st))
	if err != nil {
		c.countFallback(err)
		return 0, err
	}
	_ = unix.Fadvise(fd, 0, 0, unix.FADV_RANDOM) // a hint: no read-ahead
	e.f.fd = fd
	n, err := e.f.Update(template, rows)
	e.f.fd = -1
	if n > 0 {
		c.stats.updates.Add(1)
		c.stats.applied.Add(uint64(n))
	}
	var nn *NotNativeError
	switch {
	case errors.As(err, &nn) && (nn.Reason == ReasonValue || nn.Reason == ReasonTemplate):
		c.countFallback(err) // this batch's: the file stays native
	case errors.As(err, &nn):
		c.countFallback(err)
		if unix.Fstat(fd, &st) == nil {
			c.remember(path, idOf(&st), nn)
		}
		return n, err
	case err != nil && !errors.Is(err, ErrLocked) && n == 0 && !isRefusal(err):
		return n, err // an I/O error: parse it afresh next time
	}
	c.put(e)
	return n, err
}

// take returns the kept header of the file id at path, or a new entry for
// it.
func (c *Files) take(path string, id fileID) (*cached, error) {
	c.mu.Lock()
	if n, ok := c.not[path]; ok {
		if n.id == id {
			c.mu.Unlock()
			return nil, n.err
		}
		delete(c.not, path)
	}
	var e *cached
	if el, ok := c.kept[path]; ok {
		e = c.lru.Remove(el).(*cached)
		delete(c.kept, path)
	}
	c.mu.Unlock()
	if e != nil && e.ino.dev == id.dev && e.ino.ino == id.ino {
		return e, nil
	}
	if e != nil {
		c.stats.replaced.Add(1)
	}
	c.stats.parses.Add(1)
	return &cached{path: path, f: openedFile(path, -1), ino: id}, nil
}

// put returns e to the cache, dropping the least recently used headers
// beyond the bound.
func (c *Files) put(e *cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.kept[e.path]; ok { // a concurrent update parsed it too
		c.lru.Remove(old)
	}
	c.kept[e.path] = c.lru.PushFront(e)
	for c.lru.Len() > c.max {
		old := c.lru.Remove(c.lru.Back()).(*cached)
		delete(c.kept, old.path)
		c.stats.evictions.Add(1)
	}
}

func (c *Files) remember(path string, id fileID, err *NotNativeError) {
	c.mu.Lock()
	if len(c.not) >= 4*c.max { // a bound: forget them all rather than grow
		clear(c.not)
	}
	c.not[path] = notNativeFile{id: id, err: err}
	c.mu.Unlock()
}

func (c *Files) countFallback(err error) {
	var nn *NotNativeError
	if !errors.As(err, &nn) {
		return
	}
	v, _ := c.stats.fallbacks.LoadOrStore(nn.Reason, new(atomic.Uint64))
	v.(*atomic.Uint64).Add(1)
}

// Close drops every kept header; the cache stays usable.
func (c *Files) Close() error {
	c.mu.Lock()
	clear(c.kept)
	clear(c.not)
	c.lru.Init()
	c.mu.Unlock()
	return nil
}

// Stats returns the counters.
func (c *Files) Stats() FilesStats {
	c.mu.Lock()
	kept := c.lru.Len()
	c.mu.Unlock()
	s := FilesStats{
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

// open opens path for an update, beneath the root when c has one.
func (c *Files) open(path string) (int, error) {
	if c.root != nil {
		return c.root.Open(path, unix.O_RDWR|unix.O_CLOEXEC)
	}
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return fd, nil
}
