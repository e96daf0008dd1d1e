package spoolbackend

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdcached"
)

// The protocol's commands on RRD files, through librrd under the file's
// lock (the writer's per-file lock, so they never overlap an update):
// FIRST, LAST, INFO, FETCH, CREATE and LIST.

// lockFile takes the writer's lock of file (Writer.LockFile) and returns
// its path and the lock's release.
func (b *Backend) lockFile(file string) (path string, unlock func(), err error) {
	if err := checkFileName(file); err != nil {
		return "", nil, err
	}
	key, _ := b.keyOf(file)
	path, unlock = b.w.LockFile(key)
	return path, unlock, nil
}

// First returns the first time of the file's RRA rra (rrd_first_r).
func (b *Backend) First(_ context.Context, file string, rra int) (time.Time, error) {
	if rra < 0 {
		return time.Time{}, &rrdcached.ReplyError{Msg: fmt.Sprintf("Invalid index specified (%d)", rra)}
	}
	path, unlock, err := b.lockFile(file)
	if err != nil {
		return time.Time{}, err
	}
	defer unlock()
	sec, err := b.root.First(path, rra)
	if err != nil {
		return time.Time{}, err // librrd's message names the file
	}
	return time.Unix(sec, 0), nil
}

// Last returns what rrdcached's LAST does: the newest update, in the file
// or spooled, rounded down to the file's step (rrdcached 1.7 rounds so).
func (b *Backend) Last(ctx context.Context, file string) (time.Time, error) {
	if err := checkFileName(file); err != nil {
		return time.Time{}, err
	}
	key, _ := b.keyOf(file)
	f := b.file(file)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := b.refresh(ctx, f, file, key); err != nil {
		b.dropUnread(file, f)
		return time.Time{}, fmt.Errorf("last %s: %w", file, err)
	}
	sec := f.last.Sec
	if step := int64(f.info.Step / time.Second); step > 0 {
		sec -= sec % step
	}
	return time.Unix(sec, 0), nil
}

// flushFirst flushes file's pending updates before a read of it; a flush
// that fails for another reason than ctx is logged and the read goes on
// with what the file holds (as a graph does).
func (b *Backend) flushFirst(ctx context.Context, file string) error {
	key, _ := b.keyOf(file)
	if err := b.w.FlushKey(ctx, key); err != nil {
		if ctx.Err() != nil {
			return err
		}
		b.log.Warn("flush before a read failed; reading the file as it is", "file", file, "err", err)
	}
	return nil
}

// Info returns rrd_info_r's lines of the file in its order, formatted as
// rrdcached prints them, after flushing the file's pending updates.
func (b *Backend) Info(ctx context.Context, file string) ([]rrdcached.InfoValue, error) {
	if err := checkFileName(file); err != nil {
		return nil, err
	}
	if err := b.flushFirst(ctx, file); err != nil {
		return nil, fmt.Errorf("info %s: %w", file, err)
	}
	path, unlock, err := b.lockFile(file)
	if err != nil {
		return nil, err
	}
	defer unlock()
	items, err := b.root.InfoItems(path)
	if err != nil {
		return nil, err // librrd's message names the file
	}
	out := make([]rrdcached.InfoValue, len(items))
	for i, it := range items {
		out[i] = rrdcached.InfoValue{Key: it.Key, Type: int(it.Type), Value: it.Format()}
	}
	return out, nil
}

// Fetch flushes the file's pending updates, then fetches every data
// source (rrd_fetch_r; the server selects columns). Zero times are
// rrdcached's defaults: the last day up to now. rrdcached asks for step
// (unsigned long)-1, which librrd's choice of archive (the least
// |step - resolution|, in longs) makes the finest covering the range: the
// step of 1 s asked here makes the same choice.
func (b *Backend) Fetch(ctx context.Context, file string, a rrdcached.FetchArgs) (rrdcached.FetchResult, error) {
	if err := checkFileName(file); err != nil {
		return rrdcached.FetchResult{}, err
	}
	key, _ := b.keyOf(file)
	if err := b.w.FlushKey(ctx, key); err != nil {
		return rrdcached.FetchResult{}, fmt.Errorf("flush %s before the fetch: %w", file, err)
	}
	if a.End.IsZero() {
		a.End = b.o.Now()
	}
	if a.Start.IsZero() {
		a.Start = a.End.Add(-24 * time.Hour)
	}
	path, unlock, err := b.lockFile(file)
	if err != nil {
		return rrdcached.FetchResult{}, err
	}
	if err := fetchCost(b.root, path, a); err != nil {
		unlock()
		return rrdcached.FetchResult{}, err
	}
	r, err := b.root.Fetch(path, a.CF, a.Start, a.End, time.Second)
	unlock()
	if err != nil {
		return rrdcached.FetchResult{}, err // librrd's message names the file
	}
	return fetchResult(r), nil
}

// fetchCost checks a fetch of path against a.MaxBytes from the file's
// header, before librrd reads a row: the rows of the archive rrd_fetch
// picks (rrd.FetchRows) times every data source of the file. A header it
// cannot read, or no archive of a.CF, is librrd's to report.
func fetchCost(root *rrd.Root, path string, a rrdcached.FetchArgs) error {
	if a.MaxBytes <= 0 {
		return nil
	}
	fi, err := root.ReadHeader(path)
	if err != nil {
		return nil
	}
	rras, err := root.ReadRRAs(path)
	if err != nil || !slices.ContainsFunc(rras, func(r rrd.RRADef) bool { return r.CF == a.CF }) {
		return nil
	}
	rows, ds := rrd.FetchRows(rras, a.CF, fi.Step, fi.Last, a.Start.Unix(), a.End.Unix()), int64(max(len(fi.DS), 1))
	if rows > a.MaxBytes/8/ds {
		return &rrdcached.FetchTooLargeError{Rows: rows, DS: ds}
	}
	return nil
}

// Create creates file as rrdcached's CREATE does (rrd_create_r2), through
// a temp file published with link(2), or rename(2) when it replaces a file.
// With NoOverwrite an existing file is refused. Without it rrdcached
// overwrites; spoold does too, but never over updates still spooled for
// the file (they were acknowledged and would be lost or misapplied): that
// is refused until they are written (FLUSH). A poller target's file is
// refused. Source files (-r) are flushed first.
func (b *Backend) Create(ctx context.Context, file string, a rrdcached.CreateArgs) error {
	key, err := b.writableKey(file)
	if err != nil {
		return err
	}
	if !a.Begin.IsZero() && a.Begin.Unix() < 3600*24*365*10 {
		return &rrdcached.ReplyError{Msg: "The first entry must be after 1980."}
	}
	sources, err := b.createSources(ctx, a.Sources)
	if err != nil {
		return fmt.Errorf("create %s: %w", file, err)
	}
	var template string
	if a.Template != "" {
		tp, err := b.createSources(ctx, []string{a.Template})
		if err != nil {
			return fmt.Errorf("create %s: %w", file, err)
		}
		template = tp[0]
	}
	// A FLUSH just before may still be removing what it wrote: waited for
	// before the file's lock, which the writer takes.
	if err := b.w.WaitKey(ctx, key); err != nil {
		return fmt.Errorf("create %s: %w", file, err)
	}
	f := b.file(file)
	f.mu.Lock()
	defer f.mu.Unlock()
	path, unlock := b.w.LockFile(key)
	defer unlock()
	var st unix.Stat_t
	err = b.root.Lstat(path, &st)
	if errors.Is(err, rrd.ErrOutside) {
		return err
	}
	exists := err == nil
	if exists && a.NoOverwrite {
		return &librrdMessage{fmt.Sprintf("creating '%s': File exists", path), fs.ErrExist}
	}
	if exists {
		pending, err := b.spooled(ctx, key)
		if err != nil {
			return fmt.Errorf("create %s: read its pending updates: %w", file, err)
		}
		if len(pending) > 0 {
			return fmt.Errorf("create %s: %d acknowledged updates of the file are still spooled; spoold does not replace it under them (FLUSH it first)", file, len(pending))
		}
	}
	if err := b.createFromArgs(path, a, sources, template, exists); err != nil {
		return err
	}
	b.w.FileReplaced(key)
	f.loaded = false
	b.c.creates.Add(1)
	if exists {
		b.c.overwrites.Add(1)
		b.log.Warn("CREATE replaced an RRD file", "file", file)
	}
	return nil
}

// createSources flushes the source (or template) files of a CREATE and
// returns their paths.
func (b *Backend) createSources(ctx context.Context, files []string) ([]string, error) {
	paths := make([]string, len(files))
	for i, s := range files {
		if err := checkFileName(s); err != nil {
			return nil, err
		}
		if err := b.flushFirst(ctx, s); err != nil {
			return nil, err
		}
		paths[i] = b.path(s)
	}
	return paths, nil
}

// createFromArgs creates dst from CREATE's arguments (rrd.Root.CreateFrom):
// linked into place (never replacing a file), or renamed over the old one
// when replace.
func (b *Backend) createFromArgs(dst string, a rrdcached.CreateArgs, sources []string, template string, replace bool) error {
	lastUp := int64(-1) // librrd's default: now - 10 s
	if !a.Begin.IsZero() {
		lastUp = a.Begin.Unix()
	}
	if err := b.root.CreateFrom(dst, uint64(a.Step/time.Second), lastUp, sources, template, a.Defs, replace); err != nil {
		return b.createFailed(dst, a, err)
	}
	return nil
}

// createFailed says why librrd did not create dst, where librrd does not:
// on a full file system it fails with no message (rrdcached answers
// "RRD Error: " and nothing after it), so the free space and a probe of
// the directory give the reason. Otherwise err as it is.
func (b *Backend) createFailed(dst string, a rrdcached.CreateArgs, err error) error {
	var ds int64
	var rras []string
	for _, d := range a.Defs {
		switch {
		case strings.HasPrefix(d, "DS:"):
			ds++
		case strings.HasPrefix(d, "RRA:"):
			rras = append(rras, d)
		}
	}
	dir := filepath.Dir(dst)
	var ns *rrd.NoSpaceError
	if errors.As(rrd.NoSpace(dir, rrd.FileSizeOf(max(ds, 1), rras)), &ns) {
		return &librrdMessage{fmt.Sprintf("creating '%s': No space left on device (%s)", dst, ns.Detail()), ns}
	}
	if perr := b.root.ProbeCreate(dst); perr != nil && strings.TrimSpace(err.Error()) == "" {
		return &librrdMessage{fmt.Sprintf("creating '%s': %v", dst, perr), perr}
	}
	return err
}

// List lists dir (relative to the RRD directory; "" is the directory
// itself) as rrdcached does: its RRD files and subdirectories, or with
// recursive every RRD file below it, by names relative to dir, sorted; a
// dir that is an RRD file lists its own base name. A symlink is listed
// only if it resolves inside the RRD directory, and never descended into.
// Errors wrap the system's errno.
func (b *Backend) List(_ context.Context, dir string, recursive bool) ([]string, error) {
	if dir != "" {
		if err := checkFileName(dir); err != nil {
			return nil, err
		}
	}
	base, err := filepath.EvalSymlinks(b.o.Dir)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	root := filepath.Join(base, dir)
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	if !inside(base, real) {
		return nil, fmt.Errorf("list %s: resolves out of the RRD directory: %w", dir, unix.EACCES)
	}
	if st, err := os.Stat(real); err == nil && st.Mode().IsRegular() && strings.HasSuffix(dir, ".rrd") {
		return []string{path.Base(dir)}, nil
	}
	var out []string
	if err := listDir(base, root, "", recursive, &out); err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	sort.Strings(out)
	return out, nil
}

func listDir(base, root, rel string, recursive bool, out *[]string) error {
	ents, err := os.ReadDir(filepath.Join(root, rel))
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := path.Join(rel, e.Name())
		typ, link := e.Type(), false
		if typ&fs.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(filepath.Join(root, name))
			if err != nil || !inside(base, real) {
				continue
			}
			st, err := os.Stat(real)
			if err != nil {
				continue
			}
			typ, link = st.Mode().Type(), true
		}
		switch {
		case typ.IsDir() && !recursive:
			*out = append(*out, name)
		case typ.IsDir() && !link:
			if err := listDir(base, root, name, true, out); err != nil && !errors.Is(err, fs.ErrPermission) {
				return err
			}
		case typ.IsRegular() && strings.HasSuffix(e.Name(), ".rrd"):
			*out = append(*out, name)
		}
	}
	return nil
}

// inside reports whether p is base or below it.
func inside(base, p string) bool {
	rel, err := filepath.Rel(base, p)
	return err == nil && filepath.IsLocal(rel) || rel == "."
}

// fetchResult turns the values into rows: (End - Start) / Step of them,
// row i at Start + (i+1)·Step, as rrdcached prints them.
func fetchResult(r rrd.Fetched) rrdcached.FetchResult {
	res := rrdcached.FetchResult{Start: r.Start, End: r.End, Step: r.Step, DS: r.DS}
	rows, n := 0, len(r.DS)
	if r.Step > 0 {
		rows = int(r.End.Sub(r.Start) / r.Step)
	}
	for k := 0; k < rows && (k+1)*n <= len(r.Values); k++ {
		res.Rows = append(res.Rows, r.Values[k*n:(k+1)*n:(k+1)*n])
	}
	return res
}

// librrdMessage is an error in librrd's words (the server sends it after
// "RRD Error: ", as rrdcached does), wrapping err for errors.Is.
type librrdMessage struct {
	msg string
	err error
}

func (e *librrdMessage) Error() string { return e.msg }
func (e *librrdMessage) Unwrap() error { return e.err }
