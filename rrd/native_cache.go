package rrd

import (
	"container/list"
	"errors"
	"io/fs"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Files keeps RRD files open for native updates, with their parsed
// headers: at most a bound of them, the least recently used closed first.
// Before each use a file is checked against its path: a file replaced
// (another inode at the path, as rrdtool create or a restore does with a
// rename) is opened again; a file tuned or truncated in place is caught
// by the update itself, which reads the whole header under the lock and
// parses it again when its static part changed, and refuses a file
// shorter than its header says. Files the native path does not handle
// are remembered by inode, size and mtime, so their headers are not read
// again until the file changes. Safe for concurrent use; a file is used
// by one update at a time (a second concurrent update of the same path
// opens it once more, and the lock decides). It starts no goroutines.
type Files struct {
	mu    sync.Mutex
	max   int
	open  map[string]*list.Element // of *cached, in lru
	lru   list.List                // front: the most recently used
	not   map[string]notNativeFile
	stats filesCounters
}

type cached struct {
	path string
	f    *File
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
	updates, applied, opens, reopens, evictions atomic.Uint64
	fallbacks                                   sync.Map // reason → *atomic.Uint64
}

// FilesStats are the counters of a Files.
type FilesStats struct {
	Open      int               // files open now
	Updates   uint64            // batches applied natively
	Applied   uint64            // updates (rows) they applied
	Opens     uint64            // files opened (and headers parsed)
	Reopens   uint64            // of those, files found replaced at their path
	Evictions uint64            // files closed to stay within the bound
	Fallbacks map[string]uint64 // batches left to librrd, by NotNativeError.Reason
}

// NewFiles returns a cache of at most size open files (at least 1).
func NewFiles(size int) *Files {
	return &Files{max: max(size, 1), open: map[string]*list.Element{}, not: map[string]notNativeFile{}}
}

// Update applies rows to the file at path natively, as File.Update does.
// A *NotNativeError (nothing written) is counted by its reason: the
// caller then updates the file with librrd.
func (c *Files) Update(path string, template []string, rows []Row) (int, error) {
	e, err := c.take(path)
	if err != nil {
		c.countFallback(err)
		return 0, err
	}
	n, err := e.f.Update(template, rows)
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
		var st unix.Stat_t
		if unix.Fstat(e.f.fd, &st) == nil {
			c.remember(path, idOf(&st), nn)
		}
		e.f.Close()
		return n, err
	case err != nil && !errors.Is(err, ErrLocked) && n == 0 && !isRefusal(err):
		e.f.Close() // an I/O error: open it afresh next time
		return n, err
	}
	c.put(e)
	return n, err
}

// take returns path's open file, checked against the path, or opens it.
func (c *Files) take(path string) (*cached, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		c.drop(path)
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	id := idOf(&st)
	c.mu.Lock()
	if n, ok := c.not[path]; ok {
		if n.id == id {
			c.mu.Unlock()
			return nil, n.err
		}
		delete(c.not, path)
	}
	var e *cached
	if el, ok := c.open[path]; ok {
		e = c.lru.Remove(el).(*cached)
		delete(c.open, path)
	}
	c.mu.Unlock()
	if e != nil {
		if e.ino.dev == id.dev && e.ino.ino == id.ino {
			return e, nil
		}
		e.f.Close()
		c.stats.reopens.Add(1)
	}
	f, err := openLazy(path)
	if err != nil {
		return nil, err
	}
	c.stats.opens.Add(1)
	if err := unix.Fstat(f.fd, &st); err != nil {
		f.Close()
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	return &cached{path: path, f: f, ino: idOf(&st)}, nil
}

// put returns e to the cache, closing the least recently used files
// beyond the bound.
func (c *Files) put(e *cached) {
	var closing []*File
	c.mu.Lock()
	if old, ok := c.open[e.path]; ok { // a concurrent update opened it too
		closing = append(closing, c.lru.Remove(old).(*cached).f)
	}
	c.open[e.path] = c.lru.PushFront(e)
	for c.lru.Len() > c.max {
		old := c.lru.Remove(c.lru.Back()).(*cached)
		delete(c.open, old.path)
		closing = append(closing, old.f)
		c.stats.evictions.Add(1)
	}
	c.mu.Unlock()
	for _, f := range closing {
		f.Close()
	}
}

// drop closes path's file if it is open.
func (c *Files) drop(path string) {
	c.mu.Lock()
	el, ok := c.open[path]
	if ok {
		c.lru.Remove(el)
		delete(c.open, path)
	}
	delete(c.not, path)
	c.mu.Unlock()
	if ok {
		el.Value.(*cached).f.Close()
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

// Close closes every open file; the cache stays usable.
func (c *Files) Close() error {
	c.mu.Lock()
	var files []*File
	for _, el := range c.open {
		files = append(files, el.Value.(*cached).f)
	}
	clear(c.open)
	c.lru.Init()
	c.mu.Unlock()
	var errs []error
	for _, f := range files {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// Stats returns the counters.
func (c *Files) Stats() FilesStats {
	c.mu.Lock()
	open := c.lru.Len()
	c.mu.Unlock()
	s := FilesStats{
		Open: open, Updates: c.stats.updates.Load(), Applied: c.stats.applied.Load(),
		Opens: c.stats.opens.Load(), Reopens: c.stats.reopens.Load(), Evictions: c.stats.evictions.Load(),
		Fallbacks: map[string]uint64{},
	}
	c.stats.fallbacks.Range(func(k, v any) bool {
		s.Fallbacks[k.(string)] = v.(*atomic.Uint64).Load()
		return true
	})
	return s
}
