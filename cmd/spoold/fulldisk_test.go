package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/spool"
)

// remount makes the tmpfs at dir read-only or read-write. A read-only
// remount fails with EBUSY while a file is open for writing (an entry or
// an RRD update in progress): it is retried until a deadline.
func remount(t *testing.T, dir string, readOnly bool) {
	t.Helper()
	flags := uintptr(unix.MS_REMOUNT)
	if readOnly {
		flags |= unix.MS_RDONLY
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := unix.Mount("tmpfs", dir, "tmpfs", flags, "")
		if err == nil {
			return
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			t.Fatalf("remount %s (read-only %v): %v", dir, readOnly, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// keepFull fills dir again whenever it has room (the writer frees the
// pages of the segments it applies), as another process filling the disk
// would, until the returned stop is called.
func keepFull(t *testing.T, dir string) (filler string, stop func()) {
	t.Helper()
	filler = testenv.FillDisk(t, dir)
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		f, err := os.OpenFile(filler, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return
		}
		defer f.Close()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			for {
				if _, err := f.Write(make([]byte, 1)); err != nil {
					break
				}
			}
		}
	}()
	return filler, func() { close(done); <-stopped }
}

// checkVisibleEntries reads every file in the spool's level directories:
// each must be a whole, valid entry (a failed write never leaves a partial
// one where the loader or the writer would see it).
// logLineHas reports whether one line of logs contains every one of subs.
func logLineHas(logs string, subs ...string) bool {
	for _, line := range strings.Split(logs, "\n") {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(line, s)
		}
		if ok {
			return true
		}
	}
	return false
}

func checkVisibleEntries(t *testing.T, spoolDir string) int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(spoolDir, "?", "??", "*"))
	for _, path := range files {
		if _, err := spool.ParseName(filepath.Base(path)); err != nil {
			t.Errorf("visible file that is not an entry: %s", path)
			continue
		}
		ref, _ := spool.ParseName(filepath.Base(path))
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // applied and removed meanwhile
		}
		if g := spool.ParseSegment(ref, data); err != nil || len(g.Bad) > 0 || len(g.Entries) == 0 {
			t.Errorf("visible segment %s is not whole: read %v, bad %+v", path, err, g.Bad)
		}
	}
	return len(files)
}

// TestFullAndReadOnlyDisks runs spoold with its spool and its RRD files on
// two small tmpfs mounts and takes their space away, then makes them
// read-only, one after the other: spool writes fail cleanly (counted, the
// path logged, no partial entry visible), RRD writes back off with the
// error's kind in /status, and when space or write access returns
// everything pending lands, checked entry by entry against the RRD files.
func TestFullAndReadOnlyDisks(t *testing.T) {
	requireRRDTool(t)
	if testing.Short() {
		t.Skip("mounts file systems and runs the daemon")
	}
	dir := t.TempDir()
	spoolFS, rrdFS := filepath.Join(dir, "spool"), filepath.Join(dir, "rrd")
	testenv.MountTmpfs(t, spoolFS, "4m")
	testenv.MountTmpfs(t, rrdFS, "4m")
	r := newLedgerRig(t, dir, rigOptions{devices: 3})
	filler := testenv.FillDisk(t, rrdFS)
	// The writer takes each key's open segment (and closes its held
	// descriptor) half a poll interval after its first entry, so each
	// cycle has half a second in which no segment is open for writing:
	// the read-only remount of step 3 needs such a moment (EBUSY
	// otherwise). A write delay of one interval would close them just as
	// the next poll opens them again.
	p := startDaemon(t, r.args("--write-delay", "500ms", "--write-jitter", "0", "--loader-sleep", "0",
		"--write-backoff-min", "1s", "--write-backoff-max", "2s")...)
	p.waitFor(t, "the loader to finish", loaderDone)

	// 1. No room for new RRD files (filled before the start, so that no
	// file is created before): the writer backs off, entries wait.
	// librrd's create fails without a message, or reports success and
	// removes its file: either way the file system's free space says
	// why, and the error's kind is "nospace".
	p.waitFor(t, "RRD creates failing", func(st map[string]any) bool {
		return num(st, "writer", "errors", "nospace") >= 3 && num(st, "writer", "backoffs") >= 3
	})
	if st := p.status(t); num(st, "writer", "creates") != 0 || num(st, "writer", "entries_pending") == 0 {
		t.Fatalf("with a full RRD disk: creates %v, pending %v", num(st, "writer", "creates"), num(st, "writer", "entries_pending"))
	}
	os.Remove(filler)
	written := p.waitFor(t, "the files created and the waiting entries written", func(st map[string]any) bool {
		return num(st, "writer", "creates") == 3 && num(st, "writer", "entries_written") > 0
	})
	fmt.Printf("disk: rrd full: create errors nospace=%v other=%v backoffs=%v, then creates=%v entries_written=%v\n",
		num(written, "writer", "errors", "nospace"), num(written, "writer", "errors", "other"), num(written, "writer", "backoffs"),
		num(written, "writer", "creates"), num(written, "writer", "entries_written"))

	// 2. A full spool: poll results cannot be written; nothing partial shows.
	filler, stopFilling := keepFull(t, spoolFS)
	full := p.waitFor(t, "spool writes failing", func(st map[string]any) bool {
		return num(st, "spool", "write_errors") >= 6
	})
	stopFilling()
	checkVisibleEntries(t, spoolFS)
	if !logLineHas(p.stderr.String(), "no space left on device", "segment "+spoolFS+"/") {
		t.Errorf("no log line names a spool segment and ENOSPC:\n%s", p.stderr)
	}
	os.Remove(filler)
	w0 := num(full, "spool", "written")
	p.waitFor(t, "spool writes again", func(st map[string]any) bool { return num(st, "spool", "written") >= w0+6 })
	fmt.Printf("disk: spool full: write_errors=%v\n", num(full, "spool", "write_errors"))

	// 3. A read-only spool: the same, with EROFS.
	remount(t, spoolFS, true)
	e0 := num(p.status(t), "spool", "write_errors")
	ro := p.waitFor(t, "spool writes failing on a read-only spool", func(st map[string]any) bool {
		return num(st, "spool", "write_errors") >= e0+6
	})
	remount(t, spoolFS, false)
	w0 = num(ro, "spool", "written")
	p.waitFor(t, "spool writes again", func(st map[string]any) bool { return num(st, "spool", "written") >= w0+6 })
	checkVisibleEntries(t, spoolFS)
	fmt.Printf("disk: spool read-only: write_errors=%v\n", num(ro, "spool", "write_errors")-e0)

	// 4. Read-only RRD files: updates fail with a permission error and back off.
	remount(t, rrdFS, true)
	b0 := num(p.status(t), "writer", "backoffs")
	rrdRO := p.waitFor(t, "RRD updates failing on a read-only file system", func(st map[string]any) bool {
		return num(st, "writer", "errors", "permission") >= 3 && num(st, "writer", "backoffs") >= b0+3
	})
	remount(t, rrdFS, false)
	v0 := num(rrdRO, "writer", "entries_written")
	p.waitFor(t, "the waiting entries written", func(st map[string]any) bool {
		return num(st, "writer", "entries_written") > v0 && num(st, "writer", "targets_failing") == 0
	})
	fmt.Printf("disk: rrd read-only: permission errors=%v\n", num(rrdRO, "writer", "errors", "permission"))

	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.stderr)
	}
	// Entries applied while the spool was read-only could not be removed;
	// the next start finds them already applied and removes them.
	first := p
	p = startDaemon(t, r.args("--loader-sleep", "0")...)
	p.waitFor(t, "the loader to finish", loaderDone)
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, p.stderr)
	}
	r.ledger.stop()
	if left := spoolEntries(t, dir); len(left) != 0 {
		t.Errorf("%d entries left in the spool", len(left))
	}
	v := r.verify(t)
	fmt.Printf("disk: published=%d checked=%d after_gap=%d lost=%d doubled=%d quarantined=%d\n",
		v.published, v.checked, v.afterGap, v.lost, v.doubled, v.quarantined)
	if v.lost != 0 || v.doubled != 0 || v.quarantined != 0 || v.badRates != 0 || v.checked == 0 {
		t.Errorf("lost=%d doubled=%d quarantined=%d rates off=%d checked=%d; the daemons' warnings:\n%s\n%s", v.lost, v.doubled, v.quarantined, v.badRates, v.checked,
			warnings(first.stderr.String()), warnings(p.stderr.String()))
	}
}

// warnings returns the WARN and ERROR lines of a daemon's log.
func warnings(logs string) string {
	var out []string
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
