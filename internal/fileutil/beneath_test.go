package fileutil

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenBeneathFollowsNoSymlink: a name is opened only through real
// directories beneath dirfd; a symlink anywhere on the way or in place of
// the file (to inside or outside) is ELOOP, a name leaving dirfd EXDEV,
// with openat2 and with the walk of kernels without it.
func TestOpenBeneathFollowsNoSymlink(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	for _, d := range []string{"a/b", "c"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(dir, "a/b/f"), filepath.Join(outside, "f")} {
		if err := os.WriteFile(f, []byte("x"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"a/in": "b", "a/out": outside, "a/b/lf": "f", "c/up": "../a"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	root, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(root)
	for name, fn := range map[string]func(int, string, int, uint32) (int, error){"openat2": OpenBeneath, "walk": openWalk} {
		for _, tc := range []struct {
			name  string
			flags int
			want  error
		}{
			{"a/b/f", unix.O_RDONLY, nil},
			{"./a//b/f", unix.O_RDONLY, nil},
			{"a/b", unix.O_RDONLY | unix.O_DIRECTORY, nil},
			{"a/b/", unix.O_PATH | unix.O_DIRECTORY, nil},
			{"a/in/f", unix.O_RDONLY, unix.ELOOP},
			{"a/out/f", unix.O_RDONLY, unix.ELOOP},
			{"c/up/b/f", unix.O_RDONLY, unix.ELOOP},
			{"a/b/lf", unix.O_RDONLY, unix.ELOOP},
			{"a/out", unix.O_RDONLY | unix.O_DIRECTORY, unix.ELOOP},
			{"a/out", unix.O_PATH | unix.O_DIRECTORY, unix.ELOOP},
			{"a/b/missing", unix.O_RDONLY, unix.ENOENT},
			{"../x", unix.O_RDONLY, unix.EXDEV},
			{"a/../../x", unix.O_RDONLY, unix.EXDEV},
			{"/etc/passwd", unix.O_RDONLY, unix.EXDEV},
		} {
			fd, err := fn(root, tc.name, tc.flags, 0)
			if err == nil {
				unix.Close(fd)
			}
			if err != tc.want && !(tc.want == nil && err == nil) {
				t.Errorf("%s: open %q = %v, want %v", name, tc.name, err, tc.want)
			}
		}
	}
}

// TestOpenInsideFollowsSymlinksThatStay: OpenInside follows a symlink
// whose target is beneath dirfd and refuses one leading out, at any
// component; /proc's magic links are refused too.
func TestOpenInsideFollowsSymlinksThatStay(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a/b"), 0o750); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(dir, "a/b/f"), filepath.Join(outside, "f")} {
		if err := os.WriteFile(f, []byte("x"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"a/in": "b", "a/out": outside, "a/b/lf": "f", "a/abs": filepath.Join(dir, "a/b")} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	root, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(root)
	for _, tc := range []struct {
		name string
		want error
	}{
		{"a/b/f", nil}, {"a/in/f", nil}, {"a/b/lf", nil},
		{"a/out/f", unix.EXDEV}, {"a/abs/f", unix.EXDEV}, {"../x", unix.EXDEV},
	} {
		fd, err := OpenInside(root, tc.name, unix.O_RDONLY, 0)
		if err == nil {
			unix.Close(fd)
		}
		if err != tc.want {
			t.Errorf("open %q = %v, want %v", tc.name, err, tc.want)
		}
	}
}
