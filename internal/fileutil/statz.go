//go:build linux && (amd64 || arm64 || loong64 || mips64 || mips64le || ppc64 || ppc64le || riscv64 || s390x)

package fileutil

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Statz is fstatat(2) of pathz, a NUL-terminated name relative to dirfd
// (or absolute), with flags (unix.AT_SYMLINK_NOFOLLOW, ...). Unlike
// unix.Fstatat it converts no string, so a caller that keeps the name's
// bytes stats without allocating.
func Statz(dirfd int, pathz []byte, st *unix.Stat_t, flags int) error {
	if len(pathz) == 0 || pathz[len(pathz)-1] != 0 {
		return unix.EINVAL
	}
	_, _, e := unix.Syscall6(unix.SYS_NEWFSTATAT, uintptr(dirfd), uintptr(unsafe.Pointer(&pathz[0])), uintptr(unsafe.Pointer(st)), uintptr(flags), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
