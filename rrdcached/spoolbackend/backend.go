package spoolbackend

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/intake"
	"github.com/spoold/spoold/internal/fileutil"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdcached"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

// Backend carries out the commands of rrdcached's protocol on spoold's
// spool and writer: an UPDATE is appended to the spool and indexed
// (intake.Intake, as a poll result; with the batch fsync policy the spool
// is synced before Update returns) before Update returns, and written by
// the Writer like a poll result, exactly once. See doc.go for each command
// and where it differs from rrdcached.
//
// A Backend starts no goroutine: FLUSHALL's flush runs on the writer's
// (Writer.StartFlushAll); everything else runs on the caller's.
type Backend struct {
	w   Writer
	sp  Spool
	ix  Index
	in  *intake.Intake // appends to sp, then indexes in ix
	o   Options
	log *slog.Logger
	// root is o.Dir: every RRD file is opened beneath it, so that a
	// directory replaced by a symlink after a name was checked cannot
	// take a read or a create outside it.
	root *rrd.Root

	mu    sync.Mutex
	files map[string]*protoFile // by file name

	c    backendCounters
	sync groupSync
	bufs sync.Pool // *updateBuf
}

var _ rrdcached.Backend = (*Backend)(nil)

// Writer is what the backend needs of the RRD writer: *rrdwriter.Writer.
type Writer interface {
	// FlushKey writes every pending entry of key now; when it returns nil
	// every entry of key indexed before the call is in its RRD file. A
	// held key gives an error. It returns once the file is written; the
	// key's applied spool segments may still be being removed.
	FlushKey(ctx context.Context, key string) error
	// WaitKey waits until key has no batch in flight: what the index
	// holds of it then is still to write.
	WaitKey(ctx context.Context, key string) error
	// WaitRemovals waits until every applied segment is removed.
	WaitRemovals()
	// StartFlushAll writes everything pending on a goroutine of the
	// writer's, which the daemon's shutdown waits for, and calls done with
	// the flush's error.
	StartFlushAll(ctx context.Context, done func(error))
	// Hold stops the writing of key until Release (SUSPEND); each reports
	// whether it changed anything. ReleaseAll releases every key and
	// returns how many were held.
	Hold(key string) bool
	Release(key string) bool
	ReleaseAll() int
	// LockFile takes the lock that every write of key's RRD file holds,
	// and returns the file's path and the lock's release.
	LockFile(key string) (path string, unlock func())
	// FileReplaced says that key's file was replaced under its lock: the
	// writer reads its header again before it next writes it.
	FileReplaced(key string)
	// Written returns the writer's librrd update calls and the entries
	// they wrote (rrdcached's UpdatesWritten and DataSetsWritten).
	Written() (updateCalls, entries uint64)
}

// Spool is what the backend needs of the spool: *spool.Spool. It appends
// updates (through an intake.Intake), reads the spooled ones back
// (PENDING, QUEUE, the last update of a file after a restart), syncs them
// under the batch fsync policy and shows its figures in STATS.
type Spool interface {
	intake.Spool
	ReadSegment(r spool.Ref) (spool.Segment, error)
	Sync() error
	Levels() spool.Levels
	Stats() spool.Stats
}

// Index is what the backend needs of the index of pending segments:
// *shm.Index. It indexes new segments (through an intake.Intake) and tells
// which segments of a key are pending, without taking them.
type Index interface {
	intake.Index
	Peek(hash uint64) (b shm.Batch, ok bool)
	PeekKeys(keep func(key string) bool) []shm.Batch
	Stats() shm.Stats
}

// LeafWalker makes a key's spooled segments known to the index now:
// *loader.Loader, whose start-up walk may not have reached the key yet.
type LeafWalker interface {
	EnsureLeaf(ctx context.Context, hash uint64) error
}

// groupSync shares one spool sync (the batch fsync policy's syncfs) among
// the Updates that wait for one at the same time: a sync that starts after
// an Update's appends covers them, so each Update waits for at most the
// sync going on and one more.
type groupSync struct {
	mu       sync.Mutex
	appended atomic.Uint64 // appends done so far
	synced   uint64        // appends the last finished sync covers; under mu
}

// wait returns once sync (Spool.Sync) has run after the appends counted
// up to upTo, running it itself unless a sync that started after them has
// finished.
func (g *groupSync) wait(upTo uint64, sync func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.synced >= upTo {
		return nil
	}
	n := g.appended.Load()
	if err := sync(); err != nil {
		return err
	}
	g.synced = n
	return nil
}

// Options configure a Backend. The daemon gives it its writer's settings.
type Options struct {
	// Dir is the RRD directory, the writer's (rrdwriter.Options.Dir): the
	// protocol's file names are relative to it.
	Dir string
	// Claimed reports whether key is a poller target's (a profile is
	// configured for it): its file is written from the polls alone, and
	// updates and CREATE from clients are refused. nil claims none.
	Claimed func(key string) bool
	// Ready walks a key's spool leaf before the backend reads what is
	// spooled of it; nil means the index holds every key already.
	Ready LeafWalker
	// FutureTolerance is how far ahead of the clock an update may be
	// dated, the writer's (rrdwriter.Options.FutureTolerance, which would
	// quarantine a later one). Default 10 minutes.
	FutureTolerance time.Duration
	// FlushContext is the context of the flushes FLUSHALL starts (they
	// outlive the command); nil means context.Background(). The daemon
	// cancels it when it stops.
	FlushContext context.Context
	// Now is the clock ("N" updates, FETCH's default end); nil means
	// time.Now. It must be the writer's.
	Now func() time.Time
	// Logger receives what the backend did that a reply does not show;
	// nil discards.
	Logger *slog.Logger
}

// DefaultOptions returns the defaults documented on Options (Dir is left
// empty).
func DefaultOptions() Options { return Options{FutureTolerance: 10 * time.Minute} }

// New returns the rrdcached backend of w, writing the RRD files under
// o.Dir, whose updates go into sp and ix.
func New(w Writer, sp Spool, ix Index, o Options) (*Backend, error) {
	switch {
	case o.Dir == "":
		return nil, errors.New("new rrdcached backend: no rrd directory given")
	case o.FutureTolerance < 0:
		return nil, fmt.Errorf("new rrdcached backend: negative future tolerance %s", o.FutureTolerance)
	}
	if o.FlushContext == nil {
		o.FlushContext = context.Background()
	}
	if o.Claimed == nil {
		o.Claimed = func(string) bool { return false }
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	root, err := rrd.OpenRoot(o.Dir)
	if err != nil {
		return nil, fmt.Errorf("new rrdcached backend: %w", err)
	}
	return &Backend{w: w, sp: sp, ix: ix, in: intake.New(sp, ix), o: o, log: log, root: root, files: make(map[string]*protoFile)}, nil
}

// protoFile is what the backend knows of one RRD file a client updates.
// mu orders the file's updates: the check of their times against last and
// their appends.
type protoFile struct {
	// cached says the file was updated since the start and not forgotten
	// since: what rrdcached calls its cache tree (FLUSH's "Nothing to
	// flush", FORGET, SUSPEND and SUSPENDALL go by it).
	cached atomic.Bool
	name   fileName // set when the protoFile is made

	mu     sync.Mutex
	loaded bool
	id     fileID         // the file as its header was read
	info   rrd.FileInfo   // its header then
	last   spool.PollTime // the newest update in the file or spooled
}

// fileName is what a file's name says, worked out once per file rather
// than per update: whether it is clean, its keys, and its path as the
// NUL-terminated bytes the stat of each update takes (no conversion, no
// allocation).
type fileName struct {
	bad       error  // checkFileName's refusal
	protoKey  string // rrd.ProtocolKey
	pathKey   string // rrd.PathKey, if pathKeyOK
	pathKeyOK bool
	pathz     []byte
}

func (b *Backend) nameOf(file string) fileName {
	n := fileName{bad: checkFileName(file), protoKey: rrd.ProtocolKey(file)}
	n.pathKey, n.pathKeyOK = rrd.PathKey(file)
	n.pathz = append([]byte(b.path(file)), 0)
	return n
}

// fileID tells whether a file changed since its header was read.
type fileID struct {
	dev, ino, size uint64
	mtime, ctime   unix.Timespec
}

func idOf(st *unix.Stat_t) fileID {
	return fileID{dev: st.Dev, ino: st.Ino, size: uint64(st.Size), mtime: st.Mtim, ctime: st.Ctim}
}

// seconds is t in seconds, as rrdcached's messages have it.
func seconds(t spool.PollTime) float64 { return float64(t.Sec) + float64(t.Milli)/1000 }

// backendCounters count since NewBackend.
type backendCounters struct {
	updates, values, flushes, forgets, creates, overwrites, indexDeferred atomic.Uint64
	refused                                                               [len(refusalNames)]atomic.Uint64
}

// refusalNames index the refusal counters.
var refusalNames = [...]Refusal{RefusedSyntax, RefusedCount, RefusedTime, RefusedFuture, RefusedMissing, RefusedFile, RefusedClaimed, RefusedSpool}

func (c *backendCounters) refuse(err error) {
	if i := slices.Index(refusalNames[:], refusalOf(err)); i >= 0 {
		c.refused[i].Add(1)
	}
}

// path returns the file's path.
func (b *Backend) path(file string) string { return filepath.Join(b.o.Dir, file) }

// keyOf returns the key of file: the poller key whose RRDPath it is, if a
// profile is configured for that key (claimed), or the protocol key.
func (b *Backend) keyOf(file string) (key string, claimed bool) {
	n := b.nameOf(file)
	return b.keyOfName(&n)
}

// keyOfName is keyOf of a name worked out already.
func (b *Backend) keyOfName(n *fileName) (key string, claimed bool) {
	if n.pathKeyOK {
		if b.o.Claimed(n.pathKey) {
			return n.pathKey, true
		}
	}
	return n.protoKey, false
}

// writableKey returns the protocol key of file, or a refusal when file is
// a poller target's.
func (b *Backend) writableKey(file string) (string, error) {
	n := b.nameOf(file)
	return b.writableKeyOf(file, &n)
}

// writableKeyOf is writableKey of a name worked out already.
func (b *Backend) writableKeyOf(file string, n *fileName) (string, error) {
	if n.bad != nil {
		return "", n.bad
	}
	key, claimed := b.keyOfName(n)
	if claimed {
		return "", refuse(RefusedClaimed, "%s is the RRD file of poller target %q: spoold writes it from its polls, and refuses updates from clients so that one file never has two writers", file, key)
	}
	return key, nil
}

// checkFileName refuses a name that is not clean and relative (the
// server resolves names; this keeps the backend safe without it).
func checkFileName(file string) error {
	if _, ok := rrd.ProtocolFile(rrd.ProtocolKey(file)); !ok {
		return refuse(RefusedFile, "file name %q is not a clean relative path", file)
	}
	return nil
}

// file returns the state of file, creating it.
func (b *Backend) file(file string) *protoFile {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.files[file]
	if f == nil {
		f = &protoFile{name: b.nameOf(file)}
		b.files[strings.Clone(file)] = f
	}
	return f
}

// dropUnread removes f from the files again when it holds nothing: its
// file could not be read (a name a client asked for that does not exist
// leaves nothing behind). f.mu is held.
func (b *Backend) dropUnread(file string, f *protoFile) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.files[file] == f && !f.loaded && !f.cached.Load() {
		delete(b.files, file)
	}
}

// cachedFiles returns the files updated since the start and not
// forgotten.
func (b *Backend) cachedFiles() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for file, f := range b.files {
		if f.cached.Load() {
			out = append(out, file)
		}
	}
	return out
}

// refresh makes f's header and last update current: a stat, and the header
// read again only when the file changed (a file not read yet is opened at
// once: a stat would only precede the open's own answer). The spooled
// updates are read once per file (and again when the file is replaced),
// before the header, so that one the writer applies meanwhile is seen in
// the one or the other. f.mu is held.
func (b *Backend) refresh(ctx context.Context, f *protoFile, file, key string) error {
	var st unix.Stat_t
	if f.loaded {
		if err := fileutil.Statz(unix.AT_FDCWD, f.name.pathz, &st, 0); err != nil {
			return statError(file, err)
		}
		if idOf(&st) == f.id && st.Mode&unix.S_IFMT == unix.S_IFREG {
			return nil // the file its header was read from, as resolved beneath the directory then
		}
	}
	// Opened beneath the directory to be read: non-blocking, so that a
	// FIFO put in its place is refused, not waited on.
	fd, err := b.root.Open(b.path(file), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		return statError(file, err)
	}
	defer unix.Close(fd)
	if err := unix.Fstat(fd, &st); err != nil {
		return statError(file, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return refuse(RefusedFile, "Not a regular file: %s", file)
	}
	id := idOf(&st)
	replaced := !f.loaded || f.id.dev != id.dev || f.id.ino != id.ino
	var spooled spool.PollTime
	if replaced {
		entries, err := b.spooled(ctx, key)
		if err != nil {
			return refuse(RefusedSpool, "read the spooled updates of %s: %v", file, err)
		}
		if n := len(entries); n > 0 {
			spooled = entries[n-1].PollTime()
		}
	}
	fi, err := rrd.InfoFD(fd, b.path(file))
	if err != nil {
		return refuse(RefusedFile, "RRD Error: %v", err)
	}
	inFile := spool.PollTime{Sec: fi.Last, Milli: fi.LastMilli}
	switch {
	case replaced:
		f.last = max2(inFile, spooled)
	default:
		f.last = max2(inFile, f.last)
	}
	f.info, f.id, f.loaded = fi, id, true
	return nil
}

// statError is the refusal of a file that refresh could not stat.
func statError(file string, err error) error {
	switch {
	case errors.Is(err, unix.ENOENT):
		return &UpdateError{Reason: RefusedMissing, Err: fmt.Errorf("stat %s: %w", file, rrdcached.ErrNoSuchFile)}
	case errors.Is(err, unix.EXDEV), errors.Is(err, unix.ELOOP):
		return refuse(RefusedFile, "%s leads out of the RRD directory through a symlink", file)
	}
	return refuse(RefusedFile, "stat %s: %v", file, err)
}

func max2(a, b spool.PollTime) spool.PollTime {
	if b.Compare(a) > 0 {
		return b
	}
	return a
}

// spooled returns the spooled entries of key, in time order, without
// taking them: the segments the index holds of it (its leaf walked first),
// read; a segment removed meanwhile was written. A batch in flight is in
// them, applied or not: a caller that must not see what a FLUSH wrote
// waits for the key first (Writer.WaitKey), holding no lock the writer
// takes.
func (b *Backend) spooled(ctx context.Context, key string) ([]spool.Entry, error) {
	hash := spool.KeyHash(key)
	if b.o.Ready != nil {
		if err := b.o.Ready.EnsureLeaf(ctx, hash); err != nil {
			return nil, err
		}
	}
	pb, ok := b.ix.Peek(hash)
	if !ok {
		return nil, nil
	}
	return b.readSegments(hash, key, pb.Times)
}

// readSegments reads the entries of key in the segments of hash named by
// times, in time order.
func (b *Backend) readSegments(hash uint64, key string, times []int64) ([]spool.Entry, error) {
	var out []spool.Entry
	for _, ts := range times {
		g, err := b.sp.ReadSegment(spool.Ref{Hash: hash, Time: ts})
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range g.Entries {
			if key == "" || e.Key == key {
				out = append(out, e)
			}
		}
	}
	slices.SortStableFunc(out, func(x, y spool.Entry) int {
		return x.PollTime().Compare(y.PollTime())
	})
	return out, nil
}

// Update spools the updates of file; see the Backend interface.
func (b *Backend) Update(ctx context.Context, file string, updates []string) (int, error) {
	b.c.updates.Add(1)
	n, err := b.update(ctx, file, updates)
	if err != nil {
		b.c.refuse(err)
	}
	b.c.values.Add(uint64(n))
	return n, err
}

func (b *Backend) update(ctx context.Context, file string, updates []string) (int, error) {
	f := b.file(file)
	f.mu.Lock()
	defer f.mu.Unlock()
	key, err := b.writableKeyOf(file, &f.name)
	if err != nil {
		b.dropUnread(file, f)
		return 0, err
	}
	if err := b.refresh(ctx, f, file, key); err != nil {
		b.dropUnread(file, f)
		return 0, err
	}
	n, err := b.spoolUpdates(f, file, key, updates)
	if n > 0 {
		f.cached.Store(true)
		// The batch policy: the updates are durable before the reply.
		if serr := b.sync.wait(b.sync.appended.Add(uint64(n)), b.sp.Sync); serr != nil {
			return 0, refuse(RefusedSpool, "sync the spool after updates of %s: %v", file, serr)
		}
	}
	return n, err
}

// updateBuf is the memory of one call's updates (entries, their values,
// the segments they started), pooled: a file holds none between calls.
type updateBuf struct {
	entries []spool.Entry
	vals    []spool.Value
	created []spool.Ref
}

// spoolUpdates checks the updates against the file in order, up to the
// first one refused, and appends those before it to the spool as one run
// (Spool.AppendRun: one write to the file's open segment); it returns how
// many it spooled and the refusal. f.mu is held.
func (b *Backend) spoolUpdates(f *protoFile, file, key string, updates []string) (int, error) {
	buf, _ := b.bufs.Get().(*updateBuf)
	if buf == nil {
		buf = new(updateBuf)
	}
	defer b.bufs.Put(buf)
	now := b.o.Now()
	nds := len(f.info.DS)
	if need := nds * len(updates); cap(buf.vals) < need {
		buf.vals = make([]spool.Value, need)
	}
	buf.entries = buf.entries[:0]
	last := f.last
	var refused error
	for i, u := range updates {
		e, err := parseUpdateInto(u, f.info.DS, now, buf.vals[i*nds:(i+1)*nds:(i+1)*nds])
		if err == nil {
			err = b.checkTime(&e, last, now, file)
		}
		if err != nil {
			refused = err
			break
		}
		e.Key = key
		buf.entries = append(buf.entries, e)
		last = e.PollTime()
	}
	n, created, refusedIx, indexErr, err := b.in.AppendRun(buf.entries, buf.created)
	buf.created = created
	if refusedIx > 0 {
		// As the poller: a full index is rescanned later; the entries are on disk.
		b.c.indexDeferred.Add(uint64(refusedIx))
		b.log.Debug("index update later", "file", file, "err", indexErr)
	}
	if n > 0 {
		f.last = buf.entries[n-1].PollTime()
	}
	clear(buf.entries) // no key or values kept past the call
	if err != nil {
		return n, refuse(RefusedSpool, "spool update of %s: %v", file, err)
	}
	return n, refused
}

// checkTime refuses an update not after last, or further ahead of now
// than FutureTolerance.
func (b *Backend) checkTime(e *spool.Entry, last spool.PollTime, now time.Time, file string) error {
	if at := e.PollTime(); at.Compare(last) <= 0 {
		return &UpdateError{Reason: RefusedTime, Err: rrdcached.TimeNotAfter(seconds(at), seconds(last))}
	}
	if limit := now.Add(b.o.FutureTolerance); e.Time > limit.Unix() {
		return refuse(RefusedFuture, "update time %d of %s is more than %s ahead of the clock (--future-tolerance)", e.Time, file, b.o.FutureTolerance)
	}
	return nil
}
