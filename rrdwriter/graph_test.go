package rrdwriter

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/spoold/spoold/rrd"
)

// TestGraphOfAMissingFileIsNotExist: Graph of a key never written draws
// nothing and says the file does not exist.
func TestGraphOfAMissingFileIsNotExist(t *testing.T) {
	e := newEnv(t, newFake(), nil)
	drawn := false
	_, err := e.w.Graph(context.Background(), "never-written", func(*rrd.Root, string, rrd.FileInfo) ([]byte, error) {
		drawn = true
		return nil, nil
	})
	if !errors.Is(err, fs.ErrNotExist) || drawn {
		t.Errorf("no file: %v (drawn %v); want fs.ErrNotExist", err, drawn)
	}
}
