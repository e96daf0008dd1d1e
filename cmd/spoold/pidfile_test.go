package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFailedStartLeavesAnotherPidFile: a second spoold whose admin address
// is taken (the first one has it) fails to start; the pid file, the first
// one's, is left as it was.
func TestFailedStartLeavesAnotherPidFile(t *testing.T) {
	// The daemon runs in this process and tightens its umask for good:
	// the tests after this one create files as before.
	umask := syscall.Umask(0)
	syscall.Umask(umask)
	t.Cleanup(func() { syscall.Umask(umask) })
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pid := filepath.Join(dir, "spoold.pid")
	if err := os.WriteFile(pid, []byte("4242\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"--targets", okTargets(t), "--spool-dir", filepath.Join(dir, "spool"), "--rrd-dir", filepath.Join(dir, "rrd"),
		"--admin-listen", ln.Addr().String(), "--pid-file", pid}, &stdout, &stderr)
	if code != exitError {
		t.Fatalf("exit %d, want %d: %s", code, exitError, stderr.String())
	}
	if b, err := os.ReadFile(pid); err != nil || string(b) != "4242\n" {
		t.Fatalf("pid file after the failed start: %q, %v; want the first spoold's \"4242\\n\"", b, err)
	}
}

// TestPidFileIsRemovedOnlyIfStillOurs: at stop, the pid file is removed
// when it is the one written; replaced by another process's (another
// spoold started with the same --pid-file), it is left alone.
func TestPidFileIsRemovedOnlyIfStillOurs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replace func(path string)
		removed bool
	}{
		{"unchanged", func(string) {}, true},
		{"rewritten with another pid", func(p string) { os.WriteFile(p, []byte("4242\n"), 0o644) }, false},
		{"replaced by a new file with our pid", func(p string) {
			b, _ := os.ReadFile(p)
			os.WriteFile(p+".new", b, 0o644) // a new inode while the old one exists
			os.Rename(p+".new", p)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "spoold.pid")
			pf, err := writePidFile(path)
			if err != nil {
				t.Fatal(err)
			}
			tc.replace(path)
			err = pf.remove()
			_, statErr := os.Stat(path)
			if gone := os.IsNotExist(statErr); gone != tc.removed || (err == nil) != tc.removed {
				t.Fatalf("removed %v (remove error %v), want removed %v", gone, err, tc.removed)
			}
		})
	}
}
