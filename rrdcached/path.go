package rrdcached

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/rrd"
)

// A PathResolver turns the file names clients send into clean names
// relative to the RRD directory, as rrdcached does with -b DIR -B, and
// stricter:
//
//   - a relative name is under DIR; an absolute one must be inside DIR
//     (DIR as its real path, since rrdtool's client sends real paths);
//   - a name with a ".." segment or a NUL byte is refused, as is DIR itself;
//   - a name whose resolution leaves DIR through a symlink (anywhere in
//     it, the last segment too, dangling or not) is refused. The check is
//     one openat2(2) with RESOLVE_BENEATH, so a symlink swapped in while it
//     runs cannot escape it; a Backend that opens the file later by name
//     should open it through OpenBeneath to keep that guarantee.
//
// rrdcached requires no ".rrd" suffix except in LIST, and neither does a
// PathResolver. Repeated and "." segments are cleaned away ("a//./b.rrd" is
// "a/b.rrd").
type PathResolver struct {
	dir    string // real path, no trailing slash
	root   *os.File
	rootfd int // root's descriptor, read once (File.Fd costs a call each time)
}

// PathError is a refused name. Abs is the name as rrdcached prints it in
// its reply (DIR + "/" + name for a relative one).
type PathError struct {
	Name, Abs, Reason string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("refuse file name %q: %s", e.Name, e.Reason)
}

// NewPathResolver opens dir (which must exist) for resolving names beneath it.
func NewPathResolver(dir string) (*PathResolver, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("resolve RRD directory %s: %w", dir, err)
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return nil, fmt.Errorf("resolve RRD directory %s: %w", dir, err)
	}
	root, err := os.OpenFile(real, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open RRD directory %s: %w", real, err)
	}
	return &PathResolver{dir: real, root: root, rootfd: int(root.Fd())}, nil
}

// Dir returns the RRD directory's real path.
func (r *PathResolver) Dir() string { return r.dir }

// Close releases the directory.
func (r *PathResolver) Close() error { return r.root.Close() }

// Abs returns name as rrdcached prints it in replies: absolute names as
// sent, relative ones after DIR + "/".
func (r *PathResolver) Abs(name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	return r.dir + "/" + name
}

// Resolve checks the file name a client sent and returns it clean and
// relative to the RRD directory, or a *PathError.
func (r *PathResolver) Resolve(name string) (string, error) {
	rel, err := r.lexical(name)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", r.refuse(name, "names the RRD directory itself, not a file")
	}
	if err := r.beneath(name, rel); err != nil {
		return "", err
	}
	return rel, nil
}

// ResolveDir is Resolve for a directory (LIST): the RRD directory itself
// is allowed and returned as "".
func (r *PathResolver) ResolveDir(name string) (string, error) {
	rel, err := r.lexical(name)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", nil
	}
	if err := r.beneath(name, rel); err != nil {
		return "", err
	}
	return rel, nil
}

// lexical applies the rules that need no file system: it returns the
// cleaned relative name ("." for the directory itself).
func (r *PathResolver) lexical(name string) (string, error) {
	if strings.IndexByte(name, 0) >= 0 {
		return "", r.refuse(name, "contains a NUL byte")
	}
	rel := name
	if strings.HasPrefix(name, "/") {
		if name != r.dir && !strings.HasPrefix(name, r.dir+"/") {
			return "", r.refuse(name, "is an absolute name outside the RRD directory "+r.dir)
		}
		rel = strings.TrimPrefix(strings.TrimPrefix(name, r.dir), "/")
	}
	for _, seg := range strings.Split(rel, "/") {
		if seg == ".." {
			return "", r.refuse(name, `has a ".." segment`)
		}
	}
	return path.Clean("./" + rel), nil
}

// beneath resolves rel in the kernel, refusing a path that leaves the
// directory. A name that does not exist (yet) passes: CREATE makes it, and
// the other commands answer "No such file".
func (r *PathResolver) beneath(name, rel string) error {
	fd, err := r.openat2(rel, unix.O_PATH, 0)
	if err == nil {
		unix.Close(fd) // a raw fd: an *os.File would cost a finalizer and poller calls
		return nil
	}
	switch {
	case errors.Is(err, unix.EXDEV), errors.Is(err, unix.ELOOP):
		return r.refuse(name, "leads out of the RRD directory "+r.dir+" through a symlink")
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.EACCES):
		return nil
	}
	return r.refuse(name, err.Error())
}

func (r *PathResolver) refuse(name, reason string) error {
	return &PathError{Name: name, Abs: r.Abs(name), Reason: reason}
}

// OpenBeneath opens rel (a name Resolve returned) with flags such that no
// symlink takes the open outside the RRD directory, not even one swapped
// in meanwhile (rrd.OpenBeneath). A caller
// that must hand librrd a path can give it "/proc/self/fd/<fd>".
func (r *PathResolver) OpenBeneath(rel string, flags int, mode uint32) (*os.File, error) {
	fd, err := r.openat2(rel, flags, mode)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), r.dir+"/"+rel), nil
}

// openat2 is OpenBeneath's system call (rrd.OpenBeneath), returning the
// raw descriptor; errors name the path under the directory.
func (r *PathResolver) openat2(rel string, flags int, mode uint32) (int, error) {
	fd, err := rrd.OpenBeneath(r.rootfd, rel, flags, mode)
	var pe *os.PathError
	if errors.As(err, &pe) {
		pe.Path = r.dir + "/" + rel
	}
	return fd, err
}
