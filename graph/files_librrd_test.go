//go:build cgo

package graph

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/spoold/spoold/rrd"
)

// createFile creates the RRD file of layout l at path, as the writer
// creates one for polls from first on, and applies rows.
func createFile(tb testing.TB, path string, l rrd.Layout, first int64, rows []rrd.Sample) {
	tb.Helper()
	root := rootOf(tb, path)
	if err := root.Create(path, l, first-1); err != nil {
		tb.Fatal(err)
	}
	if err := root.Update(path, l.DSNames(), rows); err != nil {
		tb.Fatal(err)
	}
}

// graphFile draws o from the file at path as the writer lets Draw: with
// the file's header.
func graphFile(tb testing.TB, path string, o Options) ([]byte, error) {
	tb.Helper()
	root := rootOf(tb, path)
	fi, err := root.Info(path)
	if err != nil {
		tb.Fatal(err)
	}
	return o.Draw(root, path, fi)
}

// widePath is a file of wideLayout(n, step) with one update at t0, every
// value 1.
func widePath(tb testing.TB, n int, step time.Duration) (string, rrd.Layout) {
	tb.Helper()
	l := wideLayout(n, step)
	path := filepath.Join(tb.TempDir(), "wide.rrd")
	row := rrd.Sample{Time: t0}
	for range l.DS {
		row.Values = append(row.Values, "1")
	}
	createFile(tb, path, l, t0, []rrd.Sample{row})
	return path, l
}
