package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"unsafe"

	"github.com/spoold/spoold/spool"
	"golang.org/x/sys/unix"
)

// spoolLedger is the test's own record of every entry published into a
// spool, independent of the daemon (which is killed and loses its
// counters): inotify reports each rename into a level directory, and the
// ledger reads the entry's values while the file is still there.
type spoolLedger struct {
	f    *os.File
	dirs map[int32]string // watch descriptor → leaf directory
	done chan struct{}

	mu       sync.Mutex
	entries  map[spool.Ref][]spool.Entry // every version published under a name
	unread   map[spool.Ref]bool          // gone before the ledger could read it
	overflow bool                        // the kernel dropped events: the ledger is incomplete
}

// watchSpool watches every leaf directory of a spool in the default
// "1:2" layout (the daemon precreates them all) until the test ends.
func watchSpool(t *testing.T, dir string) *spoolLedger {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		t.Skipf("SKIPPED LOUDLY: inotify is not available (%v); the crash trials need it to know every entry written", err)
	}
	l := &spoolLedger{
		f: os.NewFile(uintptr(fd), "inotify"), dirs: map[int32]string{}, done: make(chan struct{}),
		entries: map[spool.Ref][]spool.Entry{}, unread: map[spool.Ref]bool{},
	}
	leaves, _ := filepath.Glob(filepath.Join(dir, "?", "??"))
	if len(leaves) != 16*256 {
		t.Fatalf("spool %s has %d leaf directories, want 4096 (precreated 1:2)", dir, len(leaves))
	}
	for _, leaf := range leaves {
		wd, err := unix.InotifyAddWatch(fd, leaf, unix.IN_MOVED_TO|unix.IN_ONLYDIR)
		if err != nil {
			l.f.Close()
			t.Skipf("SKIPPED LOUDLY: watch %s: %v (raise fs.inotify.max_user_watches)", leaf, err)
		}
		l.dirs[int32(wd)] = leaf
	}
	go l.read()
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

func (l *spoolLedger) read() {
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
			if ev.Mask&unix.IN_MOVED_TO != 0 {
				l.record(filepath.Join(l.dirs[ev.Wd], string(bytes.TrimRight(name, "\x00"))))
			}
		}
	}
}

// record reads a published entry. A name that does not parse is not an
// entry; an entry gone already (applied by a fast writer) is recorded by
// name only.
func (l *spoolLedger) record(path string) {
	ref, err := spool.ParseName(filepath.Base(path))
	if err != nil {
		return
	}
	data, rerr := os.ReadFile(path)
	e, derr := spool.Decode(data)
	l.mu.Lock()
	defer l.mu.Unlock()
	if rerr != nil || derr != nil {
		if len(l.entries[ref]) == 0 {
			l.unread[ref] = true
		}
		return
	}
	l.entries[ref] = append(l.entries[ref], e)
	delete(l.unread, ref)
}

// snapshot returns what the ledger holds; call it after stop.
func (l *spoolLedger) snapshot() (entries map[spool.Ref][]spool.Entry, unread map[spool.Ref]bool, overflow bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.entries, l.unread, l.overflow
}
