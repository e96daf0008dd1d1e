package fileutil

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadRegularReturnsTheFileUpToTheLimit: a regular file of n bytes is
// read whole and exactly when n is at most the limit, refused otherwise.
func TestReadRegularReturnsTheFileUpToTheLimit(t *testing.T) {
	const limit = 100
	dir := t.TempDir()
	for _, n := range []int{0, 1, limit - 1, limit, limit + 1, 2 * limit, 4096} {
		t.Run(strconv.Itoa(n)+" bytes", func(t *testing.T) {
			want := make([]byte, n)
			for i := range want {
				want[i] = byte(i*7 + 1)
			}
			path := filepath.Join(dir, strconv.Itoa(n))
			if err := os.WriteFile(path, want, 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ReadRegular(path, limit)
			switch {
			case n <= limit && (err != nil || !bytes.Equal(got, want)):
				t.Fatalf("read %d of %d bytes, err %v", len(got), n, err)
			case n > limit && (err == nil || !strings.Contains(err.Error(), "larger than 100 bytes")):
				t.Fatalf("%d bytes over a limit of %d: err %v", n, limit, err)
			}
		})
	}
}

// TestReadRegularRefusesAtOnce: a FIFO (whose open would block), a device
// (/dev/zero never ends) and a directory are refused without a read, the
// error naming the path and what it is; a symlink to a regular file is
// followed.
func TestReadRegularRefusesAtOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(file, link)
	for _, tc := range []struct{ path, want string }{
		{fifo, "open " + fifo + ": not a regular file but a FIFO"},
		{"/dev/zero", "open /dev/zero: not a regular file but a device"},
		{dir, "open " + dir + ": not a regular file but a directory"},
		{link, ""},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			done := make(chan error, 1)
			go func() { _, err := ReadRegular(tc.path, 1<<20); done <- err }()
			var err error
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("still reading after 10s: the read blocks")
			}
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
				t.Fatalf("ReadRegular(%s): %v, want %q", tc.path, err, tc.want)
			}
		})
	}
}
