//go:build linux

// Package testuser runs a test's file-system calls as an unprivileged
// user, so that a file's or directory's mode applies to a test run as
// root. It starts no goroutines.
package testuser

import (
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// Nobody is the uid and gid f runs with under AsNobody.
const Nobody = 65534

// AsNobody runs f with file-system uid and gid Nobody on a locked thread
// when the test runs as root (setfsuid(2) and setfsgid(2) change only the
// calling thread, and cgo calls run on it too), and as is otherwise. f
// must do its file-system calls on the calling goroutine.
func AsNobody(t testing.TB, f func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		f()
		return
	}
	t.Log("LOUD: running as root; file-system calls as uid 65534 with setfsuid(2) so that modes apply")
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	setFS := func(id int) { unix.Setfsgid(id); unix.Setfsuid(id) }
	setFS(Nobody)
	defer setFS(0)
	if got, _ := unix.SetfsuidRetUid(-1); got != Nobody {
		t.Fatalf("setfsuid did not take: fsuid %d", got)
	}
	f()
}
