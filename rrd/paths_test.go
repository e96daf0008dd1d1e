package rrd

import (
	"path/filepath"
	"testing"
	"time"
)

// The tests' own files are reached through a Root opened on the file's
// directory (made if missing) for the one call: the package offers no
// open by path.

func atDir[T any](path string, fn func(r *Root) (T, error)) (T, error) {
	r, err := MakeRoot(filepath.Dir(path))
	if err != nil {
		var zero T
		return zero, err
	}
	defer r.Close()
	return fn(r)
}

func pathCreate(path string, l Layout, start int64) error {
	_, err := atDir(path, func(r *Root) (any, error) { return nil, r.Create(path, l, start) })
	return err
}

func pathCreateFrom(path string, step uint64, lastUp int64, sources []string, template string, defs []string, replace bool) error {
	_, err := atDir(path, func(r *Root) (any, error) {
		return nil, r.CreateFrom(path, step, lastUp, sources, template, defs, replace)
	})
	return err
}

func pathUpdate(path string, template []string, rows []Sample) error {
	_, err := atDir(path, func(r *Root) (any, error) { return nil, r.Update(path, template, rows) })
	return err
}

func pathInfo(path string) (FileInfo, error) {
	return atDir(path, func(r *Root) (FileInfo, error) { return r.Info(path) })
}

func pathInfoItems(path string) ([]InfoItem, error) {
	return atDir(path, func(r *Root) ([]InfoItem, error) { return r.InfoItems(path) })
}

func pathReadHeader(path string) (FileInfo, error) {
	return atDir(path, func(r *Root) (FileInfo, error) { return r.ReadHeader(path) })
}

func pathOpenHeader(path string) (int, error) {
	return atDir(path, func(r *Root) (int, error) { return r.OpenHeader(path) })
}

func pathReadRRAs(path string) ([]RRADef, error) {
	return atDir(path, func(r *Root) ([]RRADef, error) { return r.ReadRRAs(path) })
}

func pathFetch(path, cf string, start, end time.Time, step time.Duration) (Fetched, error) {
	return atDir(path, func(r *Root) (Fetched, error) { return r.Fetch(path, cf, start, end, step) })
}

func pathFirst(path string, rra int) (int64, error) {
	return atDir(path, func(r *Root) (int64, error) { return r.First(path, rra) })
}

// testRoot is a Root on dir, closed when tb ends.
func testRoot(tb testing.TB, dir string) *Root {
	tb.Helper()
	r, err := OpenRoot(dir)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}
