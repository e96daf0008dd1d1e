package testenv

import (
	"bytes"
	"os"
	"strconv"
	"testing"
)

// PeakRSS returns the process's peak resident memory in bytes (VmHWM of
// /proc/self/status; writing "5" to /proc/self/clear_refs resets it).
func PeakRSS(tb testing.TB) int64 {
	tb.Helper()
	s, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range bytes.Split(s, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmHWM:")); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb << 10
		}
	}
	tb.Fatal("no VmHWM in /proc/self/status")
	return 0
}
