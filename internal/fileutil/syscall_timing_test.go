package fileutil

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkSystemCall is the floor under every figure that counts system
// calls (docs/benchmarks.md: a fleet's calls an interface and poll, a file
// update's): what a call costs this machine by itself, from Go, before the
// kernel does any work for it. none: getppid, a call that does nothing;
// fstat: the stat of an open file, the least a file system call does.
// Machines differ most here (a virtual machine's kernel entry and exit, the
// mitigations of the CPU's flaws), so a per-call cost measured on one
// machine is read against this one's. Besides the wall time it reports the
// loop's thread's CPU time a call, cpu-ns/op, which other processes on a
// busy machine do not inflate.
func BenchmarkSystemCall(b *testing.B) {
	b.Run("none", func(b *testing.B) {
		threadCPU(b, func() error { unix.Getppid(); return nil })
	})
	b.Run("fstat", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "f")
		if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
			b.Fatal(err)
		}
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { unix.Close(fd) })
		var st unix.Stat_t
		threadCPU(b, func() error { return unix.Fstat(fd, &st) })
	})
}

// threadCPU runs call b.N times on one thread and reports that thread's
// CPU time (user and system, getrusage RUSAGE_THREAD) a call.
func threadCPU(b *testing.B, call func() error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var r0, r1 unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &r0); err != nil {
		b.Fatal(err)
	}
	n := 0
	for b.Loop() {
		if err := call(); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &r1); err != nil {
		b.Fatal(err)
	}
	cpu := r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano()
	b.ReportMetric(float64(cpu)/float64(n), "cpu-ns/op")
}
