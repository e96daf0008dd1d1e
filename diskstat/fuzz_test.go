package diskstat

import (
	"math"
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

func FuzzParseTaskIO(f *testing.F) {
	f.Add("rchar: 1\nread_bytes: 4096\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseTaskIO(strings.NewReader(s))
		_, _ = ParseVMStat(strings.NewReader(s))
	})
}
