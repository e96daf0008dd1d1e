package diskstat

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzCompute checks the iostat arithmetic, what remains of spoold's own
// diskstats code now that procfs parses the file: over any interval, any
// two samples give rates that are finite and not negative, with %util at
// most 100, and a sample against itself gives zero rates.
func FuzzCompute(f *testing.F) {
	f.Add(uint64(1000), uint64(5000), uint64(8000), uint64(2000), uint64(30000), uint64(32000), uint64(10000),
		uint64(1200), uint64(5800), uint64(9600), uint64(2600), uint64(31800), uint64(41600), uint64(11900), int64(2e9))
	f.Add(uint64(5), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(100),
		uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(0), uint64(5000), int64(1))
	f.Fuzz(func(t *testing.T, rio, rt, rs, wio, wt, ws, io, rio2, rt2, rs2, wio2, wt2, ws2, io2 uint64, dt int64) {
		prev := Stat{ReadIOs: rio, ReadTicks: rt, ReadSectors: rs, WriteIOs: wio, WriteTicks: wt, WriteSectors: ws, IOTicks: io}
		cur := Stat{ReadIOs: rio2, ReadTicks: rt2, ReadSectors: rs2, WriteIOs: wio2, WriteTicks: wt2, WriteSectors: ws2, IOTicks: io2}
		r := Compute(prev, cur, time.Duration(dt))
		for i, v := range []float64{r.ReadsPerSec, r.WritesPerSec, r.ReadKBPerSec, r.WriteKBPerSec, r.RAwaitMs, r.WAwaitMs, r.UtilPercent} {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("rate %d = %v: %+v", i, v, r)
			}
		}
		if r.UtilPercent > 100 {
			t.Fatalf("%%util %v", r.UtilPercent)
		}
		if z := Compute(cur, cur, time.Duration(dt)); z != (Rates{}) {
			t.Fatalf("a sample against itself: %+v", z)
		}
	})
}

// FuzzParseTaskIO: whatever the text, a parse that succeeds gives values
// that, written back the kernel's way ("key: value" lines, in any order,
// with an unknown key among them), parse to the same counters; and the
// kernel's rendering of any counters parses to exactly those.
func FuzzParseTaskIO(f *testing.F) {
	f.Add("rchar: 1\nread_bytes: 4096\n", uint64(7), uint64(1<<40))
	f.Add("rchar 1", uint64(0), uint64(0))
	f.Fuzz(func(t *testing.T, s string, a, b uint64) {
		if got, err := ParseTaskIO(strings.NewReader(s)); err == nil {
			if again, err := ParseTaskIO(strings.NewReader(renderTaskIO(got, true))); err != nil || again != got {
				t.Fatalf("%q parsed to %+v; its rendering parsed to %+v, %v", s, got, again, err)
			}
		}
		want := TaskIO{RChar: a, WChar: b, SyscR: a ^ b, SyscW: a + b, ReadBytes: b, WriteBytes: a, CancelledWriteBytes: a &^ b}
		if got, err := ParseTaskIO(strings.NewReader(renderTaskIO(want, false))); err != nil || got != want {
			t.Fatalf("the kernel's rendering of %+v parsed to %+v, %v", want, got, err)
		}
	})
}

// renderTaskIO writes t as /proc/<pid>/io does, reversed and with an
// unknown key when shuffled.
func renderTaskIO(t TaskIO, shuffled bool) string {
	lines := []string{
		"rchar: " + strconv.FormatUint(t.RChar, 10), "wchar: " + strconv.FormatUint(t.WChar, 10),
		"syscr: " + strconv.FormatUint(t.SyscR, 10), "syscw: " + strconv.FormatUint(t.SyscW, 10),
		"read_bytes: " + strconv.FormatUint(t.ReadBytes, 10), "write_bytes: " + strconv.FormatUint(t.WriteBytes, 10),
		"cancelled_write_bytes: " + strconv.FormatUint(t.CancelledWriteBytes, 10),
	}
	if shuffled {
		slices.Reverse(lines)
		lines = append(lines, "future_counter: 42")
	}
	return strings.Join(lines, "\n") + "\n"
}
