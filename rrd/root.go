package rrd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/fileutil"
)

// Every open of an RRD file goes through a Root: the RRD directory held
// open as a descriptor, beneath which each name is resolved by the kernel
// at the moment of the open (OpenBeneath), so that a directory replaced by
// a symlink to somewhere else after a name was checked cannot take an
// update, a read or a create out of the directory. librrd, which opens
// files by name, is handed "/proc/self/fd/N" of the confined descriptor:
// it opens exactly that file. The package offers no other way to open an
// RRD file: every operation on one is a method of Root.

// ErrOutside is wrapped by the errors of names whose resolution leaves
// the RRD directory.
var ErrOutside = errors.New("leads out of the RRD directory")

// OutsideError is an open refused because path leaves the RRD directory
// Dir (through a symlink, or a ".." segment).
type OutsideError struct {
	Path, Dir string
	Err       error // the system's error (EXDEV or ELOOP)
}

func (e *OutsideError) Error() string {
	return fmt.Sprintf("open %s: %v %s (%v)", e.Path, ErrOutside, e.Dir, e.Err)
}

func (e *OutsideError) Unwrap() []error { return []error{ErrOutside, e.Err} }

// OpenBeneath opens name, relative to the directory dirfd, with flags
// (O_CLOEXEC is added) such that no symlink takes the open outside that
// directory, not even one swapped in meanwhile (fileutil.OpenInside:
// symlinks inside it are followed; on kernels without openat2 none is). A
// name leaving the directory fails with EXDEV or ELOOP, wrapped in an
// *os.PathError naming name.
func OpenBeneath(dirfd int, name string, flags int, mode uint32) (int, error) {
	fd, err := fileutil.OpenInside(dirfd, name, flags, mode)
	if err != nil {
		return -1, &os.PathError{Op: "openat2", Path: name, Err: err}
	}
	return fd, nil
}

// Root is an RRD directory, open for confined opens of the files beneath
// it. Its methods take paths as the callers build them (the directory as
// given to OpenRoot, "/", the file's relative name) and name them in
// errors; a path not beneath the directory is refused (*OutsideError). A
// nil *Root opens nothing: its methods fail with ErrNoRoot.
type Root struct {
	dir    string // as given, cleaned
	prefix string // dir and a slash: the start of every path beneath it
	f      *os.File
	fd     int // f's descriptor, read once
}

// OpenRoot opens dir, which must exist.
func OpenRoot(dir string) (*Root, error) {
	dir = filepath.Clean(dir)
	f, err := os.OpenFile(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open RRD directory %s: %w", dir, err)
	}
	prefix := dir + "/"
	if dir == "/" {
		prefix = "/"
	}
	return &Root{dir: dir, prefix: prefix, f: f, fd: int(f.Fd())}, nil
}

// MakeRoot is OpenRoot of dir, made first (0750, and its missing parents)
// if it does not exist.
func MakeRoot(dir string) (*Root, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create RRD directory: %w", err)
	}
	return OpenRoot(dir)
}

// ErrNoRoot is the error of a nil *Root's methods.
var ErrNoRoot = errors.New("no RRD directory to open RRD files beneath")

// Dir returns the directory as given to OpenRoot, cleaned ("" for nil).
func (r *Root) Dir() string {
	if r == nil {
		return ""
	}
	return r.dir
}

// Close releases the directory.
func (r *Root) Close() error { return r.f.Close() }

// rel returns path relative to the directory.
func (r *Root) rel(p string) (string, error) {
	if r == nil {
		return "", fmt.Errorf("open %s: %w", p, ErrNoRoot)
	}
	rel, ok := strings.CutPrefix(filepath.Clean(p), r.prefix)
	if !ok || rel == "" || !filepath.IsLocal(rel) {
		return "", &OutsideError{Path: p, Dir: r.dir, Err: errors.New("not a name beneath it")}
	}
	return rel, nil
}

// Open opens the file at path, beneath the directory, with flags. A path
// that leaves it gives an *OutsideError; a missing file an error wrapping
// fs.ErrNotExist.
func (r *Root) Open(p string, flags int) (int, error) {
	rel, err := r.rel(p)
	if err != nil {
		return -1, err
	}
	return r.openat(r.fd, p, rel, flags, 0)
}

// openat is OpenBeneath of rel beneath dirfd, its errors naming p.
func (r *Root) openat(dirfd int, p, rel string, flags int, mode uint32) (int, error) {
	fd, err := OpenBeneath(dirfd, rel, flags, mode)
	if err != nil {
		return -1, r.openError(p, errors.Unwrap(err))
	}
	return fd, nil
}

// openError is the error of a failed open of p beneath the directory: one
// that would leave it (errno EXDEV or ELOOP) an *OutsideError.
func (r *Root) openError(p string, errno error) error {
	if errors.Is(errno, unix.EXDEV) || errors.Is(errno, unix.ELOOP) {
		return &OutsideError{Path: p, Dir: r.dir, Err: errno}
	}
	return &fs.PathError{Op: "open", Path: p, Err: errno}
}

// ProcPath is the name under which a process reopens its descriptor fd:
// librrd opening it opens exactly the file fd is.
func ProcPath(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// with opens path beneath the directory (O_PATH: no access is checked and
// nothing blocks) and runs fn with the name librrd opens it by.
func (r *Root) with(p string, fn func(open string) error) error {
	fd, err := r.Open(p, unix.O_PATH)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return fn(ProcPath(fd))
}

// withLibrrd is with for a librrd call: a failed open (other than one
// leaving the directory) is reported as librrd reports its own, "opening
// '<path>': <reason>", wrapping the system's error.
func (r *Root) withLibrrd(p string, fn func(open string) error) error {
	err := r.with(p, fn)
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Op == "open" && pe.Path == p {
		return &openError{path: p, err: pe.Err}
	}
	return err
}

// openError is a failed open in librrd's words.
type openError struct {
	path string
	err  error
}

// Error capitalizes the system's message as strerror(3) does.
func (e *openError) Error() string {
	msg := e.err.Error()
	if msg != "" && msg[0] >= 'a' && msg[0] <= 'z' {
		msg = string(msg[0]-'a'+'A') + msg[1:]
	}
	return fmt.Sprintf("opening '%s': %s", e.path, msg)
}
func (e *openError) Unwrap() error { return e.err }

// Update applies rows to the file at path in order, template naming the
// data source of each value, with librrd (rrd_update_r, all rows in one
// call). Like librrd it may apply a prefix of rows and fail on the first
// one it rejects; the error then carries librrd's message.
func (r *Root) Update(p string, template []string, rows []Sample) error {
	if len(rows) == 0 {
		return nil
	}
	var uerr error
	err := r.withLibrrd(p, func(open string) error { uerr = update(p, open, template, rows); return uerr })
	if err != nil && uerr == nil { // the open failed
		return fmt.Errorf("update rrd %s: %w", p, err)
	}
	return err
}

// Info returns the last update time, step and data sources of the file at
// path, read by the Go reader (rrd_info_r for a header it does not
// recognize). A missing file gives an error wrapping fs.ErrNotExist.
func (r *Root) Info(p string) (FileInfo, error) {
	fd, err := r.OpenNoAtime(p)
	if err != nil {
		return FileInfo{}, err
	}
	defer unix.Close(fd)
	return InfoFD(fd, p)
}

// ReadHeader is Info by the Go reader alone: a header it does not
// recognize, or cannot lock, gives an error wrapping ErrHeaderUnknown.
func (r *Root) ReadHeader(p string) (FileInfo, error) {
	return readLocked(r, p, readHeaderAt)
}

// ReadRRAs reads the archive definitions of the file at path with the Go
// reader. A missing file gives an error wrapping fs.ErrNotExist.
func (r *Root) ReadRRAs(p string) ([]RRADef, error) {
	return readLocked(r, p, readRRAs)
}

// readLocked opens the file at p to read its header (OpenHeader) and reads
// it with read.
func readLocked[T any](r *Root, p string, read func(fd int, path string) (T, error)) (T, error) {
	fd, err := r.OpenHeader(p)
	if err != nil {
		var zero T
		return zero, err
	}
	defer unix.Close(fd)
	return read(fd, p)
}

// InfoItems lists every item of the header of the file at path with
// rrd_info_r, in librrd's order, as rrdcached's INFO prints them; its
// "filename" is path, not the name librrd opened.
func (r *Root) InfoItems(p string) (items []InfoItem, err error) {
	err = r.withLibrrd(p, func(open string) error { items, err = librrdInfo(open); return err })
	for i := range items {
		if items[i].Key == "filename" && items[i].Type == InfoStr {
			items[i].Str = p
		}
	}
	return items, err
}

// Fetch reads the values of the file at path consolidated with cf from
// start to end at step (rrd_fetch_r; librrd picks the archive).
func (r *Root) Fetch(p, cf string, start, end time.Time, step time.Duration) (f Fetched, err error) {
	err = r.withLibrrd(p, func(open string) error { f, err = librrdFetch(open, cf, start, end, step); return err })
	return f, err
}

// First returns the first time of the RRA rra of the file at path, Unix
// seconds (rrd_first_r).
func (r *Root) First(p string, rra int) (t int64, err error) {
	err = r.withLibrrd(p, func(open string) error { t, err = librrdFirst(open, rra); return err })
	return t, err
}

// OpenHeader opens the file at path to read its header: read-only, with
// a shared fcntl lock like rrd_info_r's (a file librrd is writing fails
// it), and posix_fadvise(RANDOM) so a read brings in only the pages asked
// for. The caller closes the descriptor.
func (r *Root) OpenHeader(p string) (int, error) {
	fd, err := r.OpenNoAtime(p)
	if err != nil {
		return -1, err
	}
	if err := LockForRead(fd); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// OpenNoAtime opens the file at path read-only, with O_NOATIME where the
// kernel allows it (reading a header should not write its inode): one
// openat2 beneath the directory.
func (r *Root) OpenNoAtime(p string) (int, error) {
	rel, err := r.rel(p)
	if err != nil {
		return -1, err
	}
	fd, err := headerNoAtime.OpenInside(r.fd, rel, unix.O_RDONLY)
	if err != nil {
		return -1, r.openError(p, err)
	}
	return fd, nil
}

// Create creates the RRD file at path from l, accepting updates after
// start (Unix seconds), and the missing directories above it, each made
// beneath the directory. It writes the file through a temp file of its
// own name (librrd's rrd_create writes in place), created relative to its
// parent's descriptor, and publishes it with link(2), which never
// replaces a file: if path exists the error wraps fs.ErrExist.
func (r *Root) Create(p string, l Layout, start int64) error {
	dfd, base, err := r.parent(p)
	if err != nil {
		return fmt.Errorf("create rrd %s: %w", p, err)
	}
	defer unix.Close(dfd)
	return create(p, parentAt{fd: dfd, dir: filepath.Dir(p), base: base}, l, start)
}

// CreateFrom creates the RRD file at path as rrdcached's CREATE does
// (rrd_create_r2): step in seconds, lastUp the time of the last update
// (-1: librrd's default, now - 10 s), sources the files whose data it
// starts from, template the file whose definitions it copies (paths
// beneath the directory too, opened confined), defs the DS: and RRA:
// definitions. It writes a temp file and publishes it with link(2), never
// replacing a file, or with rename(2) over the old one when replace.
func (r *Root) CreateFrom(p string, step uint64, lastUp int64, sources []string, template string, defs []string, replace bool) error {
	var opened []string
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, s := range append(append([]string(nil), sources...), template) {
		if s == "" {
			continue
		}
		fd, err := r.Open(s, unix.O_PATH)
		if err != nil {
			return err
		}
		fds = append(fds, fd)
		opened = append(opened, ProcPath(fd))
	}
	tmpl := ""
	if template != "" {
		tmpl, opened = opened[len(opened)-1], opened[:len(opened)-1]
	}
	dfd, base, err := r.parent(p)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	return createFrom(parentAt{fd: dfd, dir: filepath.Dir(p), base: base}, step, lastUp, opened, tmpl, defs, replace)
}

// parent opens the directory of path beneath the root, making the missing
// ones, and returns it with the file's base name.
func (r *Root) parent(p string) (int, string, error) {
	rel, err := r.rel(p)
	if err != nil {
		return -1, "", err
	}
	dir, base := path.Split(rel)
	fd, err := r.mkdirs(p, path.Clean("./"+dir))
	return fd, base, err
}

// mkdirs opens the directory rel beneath the root, making it and its
// missing parents (0750) first, each beneath the one above it.
func (r *Root) mkdirs(p, rel string) (int, error) {
	const flags = unix.O_PATH | unix.O_DIRECTORY
	fd, err := r.openat(r.fd, p, rel, flags, 0)
	if err == nil || rel == "." || !errors.Is(err, fs.ErrNotExist) {
		return fd, err
	}
	up, base := path.Split(rel)
	pfd, err := r.mkdirs(p, path.Clean("./"+up))
	if err != nil {
		return -1, err
	}
	defer unix.Close(pfd)
	if err := unix.Mkdirat(pfd, base, 0o750); err != nil && err != unix.EEXIST {
		return -1, fmt.Errorf("create rrd directory %s: %w", filepath.Join(r.dir, rel), err)
	}
	return r.openat(pfd, p, base, flags, 0)
}

// ProbeCreate creates and removes a temp file (named as TempName names
// them) in the directory of the file at path, beneath the directory, and
// returns the system's error if it cannot.
func (r *Root) ProbeCreate(p string) error {
	rel, err := r.rel(p)
	if err != nil {
		return err
	}
	dfd, err := r.openat(r.fd, p, path.Clean("./"+path.Dir(rel)), unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	return probeAt(dfd)
}

// SyncFS writes back every dirty page of the file system holding the
// directory (syncfs(2)).
func (r *Root) SyncFS() error {
	if r == nil {
		return ErrNoRoot
	}
	fd, err := unix.Openat(r.fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sync rrd file system %s: %w", r.dir, err)
	}
	defer unix.Close(fd)
	return fileutil.Syncfs(fd, "rrd file system "+r.dir)
}

// Lstat is lstat(2) of the file at path: its directory resolved beneath
// the root, the last name not followed.
func (r *Root) Lstat(p string, st *unix.Stat_t) error {
	rel, err := r.rel(p)
	if err != nil {
		return err
	}
	dir, base := path.Split(rel)
	dfd, err := r.openat(r.fd, p, path.Clean("./"+dir), unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	if err := unix.Fstatat(dfd, base, st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return &fs.PathError{Op: "lstat", Path: p, Err: err}
	}
	return nil
}
