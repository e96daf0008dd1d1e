package rrdwriter

import (
	"errors"
	"fmt"

	"github.com/spoold/spoold/rrd"
)

// NativeRRD is LibRRD with its updates made by package rrd's native path
// (the same bytes as librrd, the files' parsed headers kept in a bounded
// rrd.HeaderCache), and by librrd for every file and batch the native
// path does not handle (rrd.NotNativeError: nothing was written), each
// such fallback counted by its reason in Files' stats.
type NativeRRD struct {
	libRRD
	Files *rrd.HeaderCache
}

// NewNativeRRD returns a NativeRRD of the files beneath root (which must
// not be nil), keeping the headers of at most openFiles files.
func NewNativeRRD(root *rrd.Root, openFiles int) *NativeRRD {
	return &NativeRRD{libRRD: libRRD{mustRoot(root)}, Files: rrd.NewHeaderCache(root, openFiles)}
}

// LocalRRD returns the RRD of the files beneath root that o asks for: a
// NativeRRD with o.Native, else LibRRD(root).
func LocalRRD(root *rrd.Root, o Options) RRD {
	if o.Native {
		return NewNativeRRD(root, o.OpenFiles)
	}
	return LibRRD(root)
}

// Update applies rows natively, or with librrd where the native path
// falls back. Its errors read as librrd's (a refused time carries
// librrd's message), so the writer treats them alike.
func (n *NativeRRD) Update(path string, template []string, rows []rrd.Sample, opened func(fd int)) error {
	if len(rows) == 0 {
		return nil
	}
	_, err := n.Files.UpdateAfter(path, template, rows, opened)
	return n.settle(path, template, rows, err)
}

// UpdateFor is InfoUpdater's: the file's info read by the native update
// itself (rrd.HeaderCache.UpdateFor), and librrd for the rows where the
// native path falls back after rowsFor gave them.
func (n *NativeRRD) UpdateFor(path string, rowsFor rrd.RowsFor, opened func(fd int)) (bool, error) {
	var rows []rrd.Sample
	called := false
	_, err := n.Files.UpdateFor(path, func(fi rrd.FileInfo) []rrd.Sample {
		called = true
		rows = rowsFor(fi)
		return rows
	}, opened)
	if !called {
		return false, nil
	}
	return true, n.settle(path, nil, rows, err)
}

// settle finishes a native update of rows that gave err: librrd applies
// them where the native path fell back (its opened ran already), any
// other error names the file.
func (n *NativeRRD) settle(path string, template []string, rows []rrd.Sample, err error) error {
	var nn *rrd.NotNativeError
	switch {
	case errors.As(err, &nn):
		return n.libRRD.Update(path, template, rows, nil)
	case err != nil:
		return fmt.Errorf("update rrd %s: %w", path, err)
	}
	return nil
}

// Close drops the kept headers; the NativeRRD stays usable.
func (n *NativeRRD) Close() error { return n.Files.Close() }
