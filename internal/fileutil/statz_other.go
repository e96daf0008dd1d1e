//go:build linux && !(amd64 || arm64 || loong64 || mips64 || mips64le || ppc64 || ppc64le || riscv64 || s390x)

package fileutil

import (
	"golang.org/x/sys/unix"
)

// Statz is fstatat(2) of pathz, a NUL-terminated name relative to dirfd
// (or absolute), with flags; here through unix.Fstatat.
func Statz(dirfd int, pathz []byte, st *unix.Stat_t, flags int) error {
	if len(pathz) == 0 || pathz[len(pathz)-1] != 0 {
		return unix.EINVAL
	}
	return unix.Fstatat(dirfd, string(pathz[:len(pathz)-1]), st, flags)
}
