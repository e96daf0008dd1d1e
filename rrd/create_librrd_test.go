//go:build cgo

package rrd

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// TestCreateLongestTargetName creates, with the real librrd, the file of
// target names of every length the targets file allows up to 255: names of
// 201 characters and more failed forever with "Cannot create temporary
// file" (librrd appends "XXXXXX" to the temp name, which then passed
// NAME_MAX).
func TestCreateLongestTargetName(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{1, 200, 201, 220, 254, 255} {
		t.Run(strconv.Itoa(n)+" characters", func(t *testing.T) {
			name := strings.Repeat("a", n-1) + "z"
			path := filepath.Join(dir, RRDPath(name))
			if err := pathCreate(path, testLayout(), 1700000000); err != nil {
				t.Fatal(err)
			}
			fi, err := pathInfo(path)
			if err != nil || fi.Last != 1700000000 {
				t.Fatalf("info %+v, %v", fi, err)
			}
			left, _ := filepath.Glob(filepath.Join(dir, ".*"))
			if len(left) != 0 {
				t.Fatalf("temp files left: %v", left)
			}
		})
	}
}

// TestCreateOnFullDisk creates a file on a full file system: whatever
// librrd says (nothing, or success with the file gone), the error names
// the file, wraps ENOSPC with the free space against the file's size, and
// no file or temp file is left.
func TestCreateOnFullDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "full")
	testenv.MountTmpfs(t, dir, "1m")
	testenv.FillDisk(t, dir)
	path := filepath.Join(dir, "dev.rrd")
	err := pathCreate(path, testLayout(), 1700000000)
	var ns *NoSpaceError
	if !errors.Is(err, unix.ENOSPC) || !errors.As(err, &ns) || !strings.Contains(err.Error(), "create rrd "+path+": ") {
		t.Fatalf("create on a full disk: %v; want an error naming %s that wraps a NoSpaceError", err, path)
	}
	if ns.Need != testLayout().FileSize() {
		t.Errorf("the error says the file needs %d bytes, its layout %d", ns.Need, testLayout().FileSize())
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*dev*"))
	if len(left) != 0 {
		t.Errorf("files left: %v", left)
	}
	t.Log(err)
}
