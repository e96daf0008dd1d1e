package spool

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// appendDirent appends a linux_dirent64 record as the kernel lays it out,
// with the padding after the NUL filled with junk (the kernel does not
// clear it).
func appendDirent(b []byte, name string, typ uint8) []byte {
	reclen := (direntNameOff + len(name) + 1 + 7) &^ 7
	rec := make([]byte, reclen)
	for i := range rec {
		rec[i] = 'J'
	}
	binary.LittleEndian.PutUint64(rec[0:], 42)
	binary.LittleEndian.PutUint64(rec[8:], 7)
	binary.LittleEndian.PutUint16(rec[direntReclenOff:], uint16(reclen))
	rec[direntTypeOff] = typ
	copy(rec[direntNameOff:], name)
	rec[direntNameOff+len(name)] = 0
	return append(b, rec...)
}

func TestDirentParse(t *testing.T) {
	var names []string
	for n := 1; n <= 20; n++ {
		names = append(names, strings.Repeat("x", n))
	}
	names = append(names, "0123456789abcdef-1700000000")
	for _, unknown := range []bool{false, true} {
		t.Run(fmt.Sprintf("forceUnknown=%v", unknown), func(t *testing.T) {
			b := appendDirent(nil, ".", unix.DT_DIR)
			b = appendDirent(b, "..", unix.DT_DIR)
			for _, n := range names {
				b = appendDirent(b, n, unix.DT_REG)
			}
			r := &DirReader{ForceUnknown: unknown}
			var got []string
			err := r.parse(b, func(name []byte, typ uint8) error {
				got = append(got, string(name))
				if want := uint8(unix.DT_REG); unknown && typ != unix.DT_UNKNOWN || !unknown && typ != want {
					t.Errorf("%s: type %d", name, typ)
				}
				return nil
			})
			if err != nil || !slices.Equal(got, names) {
				t.Errorf("parse = %q, %v; want %q", got, err, names)
			}
		})
	}
}

func TestDirentParseBadRecord(t *testing.T) {
	b := appendDirent(nil, "entry", unix.DT_REG)
	binary.LittleEndian.PutUint16(b[direntReclenOff:], 3)
	if err := (&DirReader{}).parse(b, func([]byte, uint8) error { return nil }); err == nil {
		t.Error("parse accepted a record length of 3")
	}
}
