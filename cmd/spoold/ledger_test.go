package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/spool"
)

// spoolLedger is the test's own record of every entry published into a
// spool, independent of the daemon (which is killed and loses its
// counters): inotify reports each segment created, appended to or renamed
// into a level directory, and the ledger reads the entries added since it
// last read the file, while the file is still there. Entries are recorded
// by their own poll time (Entry.Ref), whatever segment holds them.
type spoolLedger struct {
	f    *os.File
	dirs map[int32]string // watch descriptor → leaf directory
	done chan struct{}
	read map[string]int64 // path → bytes of it read (good entries)

	// trial is the crash trial under way, set by the test, for the
	// sources and events below.
	trial atomic.Int32

	mu       sync.Mutex
	entries  map[spool.Ref][]spool.Entry // every version published of a poll time
	unread   map[spool.Ref]bool          // a segment gone before the ledger read it: its first entry
	overflow bool                        // the kernel dropped events: the ledger is incomplete
	sources  map[spool.Ref][]entrySource // where each version was read
	events   map[string][]pathEvent      // what happened to each segment name
}

// entrySource is where the ledger read an entry: the segment file (its
// path and inode), the entry's offset in it, and the trial under way.
type entrySource struct {
	path  string
	ino   uint64
	off   int64
	trial int32
}

// pathEvent is a change of a segment name the ledger saw: created or
// renamed in (with the inode the ledger found and the bytes it read),
// deleted, or renamed away.
type pathEvent struct {
	trial int32
	what  string
	ino   uint64
	size  int64
}

func (e pathEvent) String() string {
	if e.ino == 0 {
		return fmt.Sprintf("trial %d: %s", e.trial, e.what)
	}
	return fmt.Sprintf("trial %d: %s (inode %d, %d bytes)", e.trial, e.what, e.ino, e.size)
}

// watchSpool watches every leaf directory of a spool in the default
// "1:2" layout (the daemon precreates them all) until the test ends.
func watchSpool(t *testing.T, dir string) *spoolLedger {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		testenv.Missing(t, "inotify is not available (%v); the crash trials need it to know every entry written", err)
	}
	l := &spoolLedger{
		f: os.NewFile(uintptr(fd), "inotify"), dirs: map[int32]string{}, done: make(chan struct{}),
		entries: map[spool.Ref][]spool.Entry{}, unread: map[spool.Ref]bool{}, read: map[string]int64{},
		sources: map[spool.Ref][]entrySource{}, events: map[string][]pathEvent{},
	}
	leaves, _ := filepath.Glob(filepath.Join(dir, "?", "??"))
	if len(leaves) != 16*256 {
		t.Fatalf("spool %s has %d leaf directories, want 4096 (precreated 1:2)", dir, len(leaves))
	}
	for _, leaf := range leaves {
		wd, err := unix.InotifyAddWatch(fd, leaf, unix.IN_MOVED_TO|unix.IN_MODIFY|unix.IN_CREATE|unix.IN_DELETE|unix.IN_MOVED_FROM|unix.IN_ONLYDIR)
		if err != nil {
			l.f.Close()
			testenv.Missing(t, "watch %s: %v (raise fs.inotify.max_user_watches)", leaf, err)
		}
		l.dirs[int32(wd)] = leaf
	}
	go l.run()
	t.Cleanup(l.stop)
	return l
}

// stop ends the watch; events already queued are read first. Safe to call twice.
func (l *spoolLedger) stop() {
	select {
	case <-l.done:
		return
	default:
	}
	l.f.Close()
	<-l.done
}

func (l *spoolLedger) run() {
	defer close(l.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := l.f.Read(buf)
		if err != nil {
			if !errors.Is(err, os.ErrClosed) {
				l.mu.Lock()
				l.overflow = true // unexpected: count as incomplete
				l.mu.Unlock()
			}
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				l.mu.Lock()
				l.overflow = true
				l.mu.Unlock()
				continue
			}
			path := filepath.Join(l.dirs[ev.Wd], string(bytes.TrimRight(name, "\x00")))
			switch {
			case ev.Mask&(unix.IN_MOVED_TO|unix.IN_MODIFY|unix.IN_CREATE) != 0:
				l.record(path, ev.Mask&unix.IN_MOVED_TO != 0, ev.Mask&(unix.IN_MOVED_TO|unix.IN_CREATE) != 0)
			case ev.Mask&unix.IN_DELETE != 0:
				l.note(path, pathEvent{what: "deleted"})
			case ev.Mask&unix.IN_MOVED_FROM != 0:
				l.note(path, pathEvent{what: "renamed away"})
			}
		}
	}
}

// record reads the entries of the segment at path that the ledger has
// not read yet (all of them for a file renamed in: a new file). A name
// that does not parse is not a segment. A file renamed in and gone before
// the ledger read it (applied by a fast writer) is recorded as its first
// entry's time, unread; a segment created in place and gone unread is not
// (its first write may have failed: a full disk, never acknowledged). A
// torn tail is an append in progress: the next event reads it.
func (l *spoolLedger) record(path string, renamed, created bool) {
	ref, err := spool.ParseName(filepath.Base(path))
	if err != nil {
		return
	}
	if renamed {
		delete(l.read, path)
	}
	data, ino, rerr := readWithInode(path)
	if created {
		what := "created"
		if renamed {
			what = "renamed in"
		}
		l.note(path, pathEvent{what: what, ino: ino, size: int64(len(data))})
	}
	from := l.read[path]
	if rerr != nil || int64(len(data)) < from {
		if rerr != nil && from == 0 && renamed {
			l.mu.Lock()
			if len(l.entries[ref]) == 0 {
				l.unread[ref] = true
			}
			l.mu.Unlock()
		}
		return
	}
	g := spool.ParseSegment(ref, data)
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, e := range g.Entries {
		end := g.Offsets[i] + int64(e.EncodedLen())
		if g.Offsets[i] < from {
			continue
		}
		r := e.Ref()
		l.entries[r] = append(l.entries[r], e)
		l.sources[r] = append(l.sources[r], entrySource{path, ino, g.Offsets[i], l.trial.Load()})
		delete(l.unread, r)
		l.read[path] = end
	}
}

// readWithInode reads the file at path and returns its inode too.
func readWithInode(path string) ([]byte, uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return nil, 0, err
	}
	data, err := io.ReadAll(f)
	return data, st.Ino, err
}

// note records an event of the segment name path.
func (l *spoolLedger) note(path string, e pathEvent) {
	if _, err := spool.ParseName(filepath.Base(path)); err != nil {
		return
	}
	e.trial = l.trial.Load()
	l.mu.Lock()
	l.events[path] = append(l.events[path], e)
	l.mu.Unlock()
}

// provenance returns where the ledger read the entries of ref and what
// happened to the names that held them; call it after stop.
func (l *spoolLedger) provenance(ref spool.Ref) ([]entrySource, map[string][]pathEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ev := map[string][]pathEvent{}
	for _, s := range l.sources[ref] {
		ev[s.path] = l.events[s.path]
	}
	return l.sources[ref], ev
}

// snapshot returns what the ledger holds; call it after stop.
func (l *spoolLedger) snapshot() (entries map[spool.Ref][]spool.Entry, unread map[spool.Ref]bool, overflow bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.entries, l.unread, l.overflow
}
