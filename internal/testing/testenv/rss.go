package testenv

import (
	"os"
	"testing"

	"github.com/prometheus/procfs"
)

// ResetPeakRSS resets the process's peak resident memory (VmHWM) to its
// current resident memory, so that PeakRSS measures from here; a kernel
// that refuses it is Missing.
func ResetPeakRSS(tb testing.TB) {
	tb.Helper()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		Missing(tb, "cannot reset the peak RSS (VmHWM): %v", err)
	}
}

// PeakRSS returns the process's peak resident memory in bytes (VmHWM).
func PeakRSS(tb testing.TB) int64 {
	tb.Helper()
	p, err := procfs.Self()
	if err != nil {
		tb.Fatal(err)
	}
	st, err := p.NewStatus()
	if err != nil {
		tb.Fatal(err)
	}
	return int64(st.VmHWM)
}
