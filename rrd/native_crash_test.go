package rrd

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/fileutil"
)

// crashDefs is a file whose live head spans two pages, so that a cut at
// the page boundary leaves a part of it old.
var crashDefs = func() []string {
	var d []string
	for i := range 12 {
		d = append(d, fmt.Sprintf("DS:d%d:COUNTER:120:U:U", i))
	}
	return append(d, "RRA:AVERAGE:0.5:1:50", "RRA:MAX:0.5:3:20", "RRA:LAST:0.5:12:10", "RRA:MIN:0.5:1:7")
}()

func crashBatch(from, n int) []string {
	return series(t0+int64(from)*60+13, 60, n, 12, func(k, d int) string { return fmt.Sprint((from+k)*(d+1)*1000 + d) })
}

// nativeWith applies args to path through a File whose live head write is
// head.
func nativeWith(t *testing.T, path string, args []string, head func(fd int, b []byte, off int64) error) (int, error) {
	t.Helper()
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.writeHead = head
	ups := make([]Sample, len(args))
	for i, a := range args {
		ups[i] = parseUpdateArg(t, a)
	}
	return f.Update(nil, ups)
}

// TestNativeCrashBeforeHead: a batch whose rows were written but not its
// live head (killed between the two) leaves a file librrd reads, under
// the old last update, and applying the batch again gives the bytes of
// an uninterrupted run.
func TestNativeCrashBeforeHead(t *testing.T) {
	tw := newTwin(t, t0, 60, crashDefs...)
	tw.batch(t, nil, crashBatch(0, 5)...)
	b := crashBatch(5, 9)
	if err := tw.librrdUpdate(t, nil, b); err != nil {
		t.Fatal(err)
	}
	lost := errors.New("killed")
	if _, err := nativeWith(t, tw.nat, b, func(int, []byte, int64) error { return lost }); !errors.Is(err, lost) {
		t.Fatalf("got %v", err)
	}
	if _, err := rrdtool(t, "dump", tw.nat); err != nil {
		t.Fatalf("librrd does not read the file: %v", err)
	}
	if out, _ := rrdtool(t, "last", tw.nat); strings.TrimSpace(out) != fmt.Sprint(t0+4*60+13) {
		t.Fatalf("last update %s, want the one before the batch", out)
	}
	if n, err := nativeWith(t, tw.nat, b, fileutil.PwriteAll); n != len(b) || err != nil {
		t.Fatalf("replay: %d applied, %v", n, err)
	}
	tw.same(t, "the replay")
}

// TestNativeTornHead: a live head cut at a page boundary (a kill between
// the kernel's page copies, or a power loss writing back one page and not
// the next) leaves a file librrd still reads and updates, whose last
// update is the batch's: the batch counts as applied and is not applied
// again.
func TestNativeTornHead(t *testing.T) {
	tw := newTwin(t, t0, 60, crashDefs...)
	tw.batch(t, nil, crashBatch(0, 5)...)
	f, err := Open(tw.nat)
	if err != nil {
		t.Fatal(err)
	}
	off, n := f.Header().LiveRange()
	f.Close()
	page := int64(os.Getpagesize())
	cut := (off/page+1)*page - off
	if cut >= n {
		t.Fatalf("the live head [%d, +%d) is inside one page", off, n)
	}
	b := crashBatch(5, 9)
	torn := func(fd int, h []byte, off int64) error { return fileutil.PwriteAll(fd, h[:cut], off) }
	if n, err := nativeWith(t, tw.nat, b, torn); n != len(b) || err != nil {
		t.Fatalf("%d applied, %v", n, err)
	}
	if _, err := rrdtool(t, "dump", tw.nat); err != nil {
		t.Fatalf("librrd does not read the torn file: %v", err)
	}
	if _, err := nativeWith(t, tw.nat, b[:1], fileutil.PwriteAll); err == nil || !strings.Contains(err.Error(), "illegal attempt to update") {
		t.Fatalf("the batch was applied again: %v", err)
	}
	next := crashBatch(14, 3)
	if _, err := rrdtool(t, append([]string{"update", tw.nat}, next[:1]...)...); err != nil {
		t.Fatalf("librrd does not update the torn file: %v", err)
	}
	if n, err := nativeWith(t, tw.nat, next[1:], fileutil.PwriteAll); n != 2 || err != nil {
		t.Fatalf("native update after the tear: %d, %v", n, err)
	}
}

// lockChildEnv makes the test binary a process that holds librrd's lock
// (a POSIX fcntl write lock on the whole file) until its stdin closes.
const lockChildEnv = "RRD_NATIVE_LOCK_CHILD"

// holdLockIfChild is TestMain's start: in the lock child it takes the
// lock, says so, and exits when its stdin closes.
func holdLockIfChild() {
	if path := os.Getenv(lockChildEnv); path != "" {
		fd, err := unix.Open(path, unix.O_RDWR, 0)
		if err == nil {
			err = unix.FcntlFlock(uintptr(fd), unix.F_SETLK, &unix.Flock_t{Type: unix.F_WRLCK})
		}
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		fmt.Println("locked")
		bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
}

// TestNativeLock: the native path and librrd exclude each other across
// processes: while another process holds librrd's lock a native update
// fails with librrd's "could not lock RRD" and writes nothing; while a
// native update holds the lock, rrdtool update fails the same way.
func TestNativeLock(t *testing.T) {
	tw := newTwin(t, t0, 60, "DS:a:GAUGE:120:U:U", "RRA:AVERAGE:0.5:1:5")
	child := exec.Command(os.Args[0])
	child.Env = append(os.Environ(), lockChildEnv+"="+tw.nat)
	in, _ := child.StdinPipe()
	out, _ := child.StdoutPipe()
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "locked\n" {
		t.Fatalf("lock child: %q", line)
	}
	before, _ := os.ReadFile(tw.nat)
	_, err := tw.nativeUpdate(t, nil, []string{fmt.Sprint(t0+30, ":1")})
	if !errors.Is(err, ErrLocked) || err.Error() != "could not lock RRD" {
		t.Errorf("native update under another process's lock: %v", err)
	}
	if after, _ := os.ReadFile(tw.nat); string(after) != string(before) {
		t.Error("the native update wrote under someone else's lock")
	}
	in.Close()
	child.Wait()

	f, err := Open(tw.nat)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.lock(unix.F_WRLCK); err != nil {
		t.Fatal(err)
	}
	if _, err := rrdtool(t, "update", tw.nat, fmt.Sprint(t0+30, ":1")); err == nil || !strings.Contains(err.Error(), "could not lock RRD") {
		t.Errorf("rrdtool update under the native lock: %v", err)
	}
	// A header reader of this process is not refused (its read lock is
	// the process's, as librrd's would be).
	if _, err := pathReadHeader(tw.nat); err != nil {
		t.Errorf("ReadHeader under the native lock: %v", err)
	}
	f.lock(unix.F_UNLCK)
	if _, err := f.Update(nil, []Sample{{Time: t0 + 30, Values: []string{"1"}}}); err != nil {
		t.Errorf("after the unlock: %v", err)
	}
	// An update through a HeaderCache leaves its lock to the close of its
	// descriptor, right after: rrdtool updates the file next.
	c := NewHeaderCache(testRoot(t, filepath.Dir(tw.nat)), 1)
	defer c.Close()
	if _, err := c.Update(tw.nat, nil, []Sample{{Time: t0 + 60, Values: []string{"2"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rrdtool(t, "update", tw.nat, fmt.Sprint(t0+90, ":3")); err != nil {
		t.Errorf("rrdtool update after an update through the header cache: %v", err)
	}
}
