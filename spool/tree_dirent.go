package spool

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// direntBufSize is the getdents(2) buffer: a leaf directory of a few
// hundred entries fits in one call.
const direntBufSize = 64 << 10

// Offsets in struct linux_dirent64: d_ino u64, d_off s64, d_reclen u16,
// d_type u8, then the NUL-terminated name.
const (
	direntReclenOff = 16
	direntTypeOff   = 18
	direntNameOff   = 19
)

// DirReader reads directory entries with getdents(2) into one reused
// buffer, so reading a name allocates nothing. It is not safe for
// concurrent use: each walk has its own.
type DirReader struct {
	buf []byte
	// ForceUnknown makes every entry DT_UNKNOWN, as some file systems
	// report; tests use it to exercise the lstat fallback.
	ForceUnknown bool
}

// NewDirReader returns a reader with a 64 KiB buffer.
func NewDirReader() *DirReader { return &DirReader{buf: make([]byte, direntBufSize)} }

// Each calls fn for each entry of the open directory fd but "." and "..",
// with the name (valid only during the call) and its d_type. It stops early
// when fn returns an error and returns that error.
func (r *DirReader) Each(fd int, fn func(name []byte, typ uint8) error) error {
	for {
		n, err := unix.Getdents(fd, r.buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read directory entries: %w", err)
		}
		if n <= 0 {
			return nil
		}
		if err := r.parse(r.buf[:n], fn); err != nil {
			return err
		}
	}
}

// parse walks the dirent records in b.
func (r *DirReader) parse(b []byte, fn func(name []byte, typ uint8) error) error {
	for len(b) >= direntNameOff {
		reclen := int(b[direntReclenOff]) | int(b[direntReclenOff+1])<<8
		if reclen < direntNameOff || reclen > len(b) {
			return fmt.Errorf("read directory entries: bad record length %d", reclen)
		}
		name := trimNUL(b[direntNameOff:reclen])
		typ := b[direntTypeOff]
		b = b[reclen:]
		if isDot(name) {
			continue
		}
		if r.ForceUnknown {
			typ = unix.DT_UNKNOWN
		}
		if err := fn(name, typ); err != nil {
			return err
		}
	}
	return nil
}

// trimNUL cuts the NUL terminator and padding off a d_name field. The
// kernel pads a record to 8 bytes after the NUL (the padding is not
// cleared), so the NUL is within the last 8 bytes: only those are searched.
func trimNUL(name []byte) []byte {
	for i := max(0, len(name)-8); i < len(name); i++ {
		if name[i] == 0 {
			return name[:i]
		}
	}
	return name
}

func isDot(name []byte) bool {
	return (len(name) == 1 && name[0] == '.') || (len(name) == 2 && name[0] == '.' && name[1] == '.')
}

// ResolveType returns typ, or for DT_UNKNOWN the type lstat (fstatat with
// AT_SYMLINK_NOFOLLOW) finds for name in the directory dirfd.
func ResolveType(dirfd int, name []byte, typ uint8) (uint8, error) {
	if typ != unix.DT_UNKNOWN {
		return typ, nil
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return typ, fmt.Errorf("lstat %s: %w", name, err)
	}
	// A d_type is the file type bits of the mode shifted down (DT_DIR is
	// S_IFDIR>>12), as the kernel's dirents make it.
	return uint8(st.Mode & unix.S_IFMT >> 12), nil
}
