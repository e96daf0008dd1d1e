package rrdwriter

import (
	"testing"
	"unsafe"
)

// TestFileStateSize: the writer keeps a state for every RRD file it has
// written since it started, a fleet's worth (2.4 million interfaces, say):
// each 16 bytes more is another size class, 38 MB more heap and about
// twice that of RSS.
func TestFileStateSize(t *testing.T) {
	if n := unsafe.Sizeof(fileState{}); unsafe.Sizeof(uintptr(0)) == 8 && n > 112 {
		t.Errorf("a file's state is %d bytes; want it within the 112-byte size class", n)
	}
}
