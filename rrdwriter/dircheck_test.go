//go:build cgo

package rrdwriter

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spoold/spoold/internal/testing/testuser"
	"github.com/spoold/spoold/rrd"
)

// testDir returns a new directory of the given mode that uid 65534 can
// reach.
func testDir(t *testing.T, mode os.FileMode) string {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "rrd")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for d := base; strings.HasPrefix(d, os.TempDir()) && d != os.TempDir(); d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	os.Chmod(dir, mode)
	return dir
}

// TestCreateInAnUnwritableDirIsPermission: librrd says only "Cannot create
// temporary file" when the RRD directory is not writable (mode 555, another
// user), which was kind other; it is kind permission.
func TestCreateInAnUnwritableDirIsPermission(t *testing.T) {
	dir := testDir(t, 0o555)
	var err error
	testuser.AsNobody(t, func() {
		var r *rrd.Root
		if r, err = rrd.OpenRoot(dir); err == nil {
			err = LibRRD(r).Create(filepath.Join(dir, "r1.rrd"), testLayout(), 1700000000)
			r.Close()
		}
	})
	if err == nil || classify(err) != KindPermission {
		t.Fatalf("create in a mode 555 directory: %v, kind %v; want kind permission", err, classify(err))
	}
}

// TestCheckDir: the start-up check of the RRD directory creates and removes
// a probe file of spoold's temp-name pattern; it fails, as kind
// permission and naming the directory, where spoold cannot create files.
func TestCheckDir(t *testing.T) {
	ok := testDir(t, 0o777)
	file := filepath.Join(ok, "file")
	os.WriteFile(file, nil, 0o600)
	for _, tc := range []struct {
		name, dir string
		fails     bool
	}{
		{"writable", ok, false},
		{"missing below a writable parent", filepath.Join(ok, "new", "rrd"), false},
		{"mode 555", testDir(t, 0o555), true},
		{"a file", file, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			testuser.AsNobody(t, func() { err = CheckDir(tc.dir) })
			if !tc.fails {
				if err != nil {
					t.Fatal(err)
				}
				if left, _ := filepath.Glob(filepath.Join(ok, ".*")); len(left) != 0 {
					t.Fatalf("probe left behind: %v", left)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.dir) {
				t.Fatalf("CheckDir(%s) = %v, want an error naming it", tc.dir, err)
			}
			if tc.name == "mode 555" && (classify(err) != KindPermission || !errors.Is(err, os.ErrPermission)) {
				t.Fatalf("CheckDir of a mode 555 directory: %v, kind %v; want permission", err, classify(err))
			}
		})
	}
}

// TestCheckDirNamesTheMissingDirectory: an --rrd-dir whose parent is
// missing under a directory that takes no files (/proc) names the missing
// directory and that parent, not the probe's temp file.
func TestCheckDirNamesTheMissingDirectory(t *testing.T) {
	err := CheckDir("/proc/spoold-missing/rrd")
	if err == nil {
		t.Fatal("CheckDir under /proc: no error")
	}
	msg := err.Error()
	if !strings.Contains(msg, "/proc/spoold-missing does not exist and cannot be created in /proc") || strings.Contains(msg, "probe") {
		t.Errorf("CheckDir under /proc: %q; want the missing directory and its parent named, no probe file", msg)
	}
}
