//go:build cgo

package rrd

import (
	"os"
	"testing"
)

// librrdIllegalTime is the start of librrd's message for an update at or
// before the last one.
const librrdIllegalTime = "illegal attempt to update using time"

// readFileGeometry reads path's whole geometry from the file's bytes.
func readFileGeometry(t *testing.T, path string) Geometry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	l, need, err := parseGeometry(b)
	if err != nil || need > len(b) {
		t.Fatalf("parseGeometry %s: need %d of %d, %v", path, need, len(b), err)
	}
	return l
}
