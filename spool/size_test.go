package spool

import (
	"testing"
	"unsafe"
)

// TestOpenSegmentSize: a key appended to between two writes of its file
// keeps an open segment, so a fleet keeps one for nearly every key (2.4
// million interfaces, say): each 16 bytes more is another size class, 38
// MB more heap and about twice that of RSS.
func TestOpenSegmentSize(t *testing.T) {
	if n := unsafe.Sizeof(openSegment{}); unsafe.Sizeof(uintptr(0)) == 8 && n > 96 {
		t.Errorf("an open segment is %d bytes; want it within the 96-byte size class", n)
	}
}
