package diskstat

import (
	"fmt"
	"time"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/blockdevice"
)

// Stat is one line of /proc/diskstats (Documentation/admin-guide/iostats.rst).
// Times are in milliseconds, sectors are 512 bytes.
type Stat struct {
	Major, Minor uint32
	Name         string
	ReadIOs      uint64 // reads completed
	ReadMerges   uint64
	ReadSectors  uint64
	ReadTicks    uint64 // ms spent reading
	WriteIOs     uint64 // writes completed
	WriteMerges  uint64
	WriteSectors uint64
	WriteTicks   uint64 // ms spent writing
	InFlight     uint64 // I/Os currently in progress
	IOTicks      uint64 // ms the device had I/O in flight (the base of %util)
	TimeInQueue  uint64 // weighted ms
}

// statOf is procfs's line of /proc/diskstats as a Stat.
func statOf(d blockdevice.Diskstats) Stat {
	return Stat{
		Major: d.MajorNumber, Minor: d.MinorNumber, Name: d.DeviceName,
		ReadIOs: d.ReadIOs, ReadMerges: d.ReadMerges, ReadSectors: d.ReadSectors, ReadTicks: d.ReadTicks,
		WriteIOs: d.WriteIOs, WriteMerges: d.WriteMerges, WriteSectors: d.WriteSectors, WriteTicks: d.WriteTicks,
		InFlight: d.IOsInProgress, IOTicks: d.IOsTotalTicks, TimeInQueue: d.WeightedIOTicks,
	}
}

// Sample is the counters of some devices at one instant.
type Sample struct {
	Time  time.Time
	Stats []Stat
}

// Find returns the counters of the named device.
func (s Sample) Find(name string) (Stat, bool) {
	for _, st := range s.Stats {
		if st.Name == name {
			return st, true
		}
	}
	return Stat{}, false
}

// ReadSample reads /proc/diskstats now.
func ReadSample() (Sample, error) { return readSample(procfs.DefaultMountPoint) }

// readSample reads <proc>/diskstats through procfs, which parses lines of
// 14, 18 or 20 fields (discard and flush counters are not kept here) and
// skips shorter ones; a field that is not a number is an error.
func readSample(proc string) (Sample, error) {
	fs, err := blockdevice.NewFS(proc, "")
	if err != nil {
		return Sample{}, fmt.Errorf("read diskstats: %w", err)
	}
	t := time.Now()
	ds, err := fs.ProcDiskstats()
	if err != nil {
		return Sample{Time: t}, fmt.Errorf("read %s/diskstats: %w", proc, err)
	}
	st := make([]Stat, len(ds))
	for i, d := range ds {
		st[i] = statOf(d)
	}
	return Sample{Time: t, Stats: st}, nil
}

// Rates are what `iostat -x` prints for one device over an interval.
type Rates struct {
	ReadsPerSec   float64 `json:"reads_per_second"`    // r/s
	WritesPerSec  float64 `json:"writes_per_second"`   // w/s
	ReadKBPerSec  float64 `json:"read_kb_per_second"`  // rkB/s
	WriteKBPerSec float64 `json:"write_kb_per_second"` // wkB/s
	RAwaitMs      float64 `json:"r_await_ms"`          // r_await: ms per completed read
	WAwaitMs      float64 `json:"w_await_ms"`          // w_await: ms per completed write
	UtilPercent   float64 `json:"util_percent"`        // %util: share of the interval with I/O in flight
}

// Compute returns the rates between two samples of one device taken dt
// apart, as sysstat's iostat computes them: r/s = Δreads/dt, r_await =
// Δread_ticks/Δreads (0 without reads), %util = Δio_ticks/dt × 100 (capped at
// 100). Counters that went backwards (a device re-added) give zero deltas.
func Compute(prev, cur Stat, dt time.Duration) Rates {
	sec := dt.Seconds()
	if sec <= 0 {
		return Rates{}
	}
	d := func(a, b uint64) float64 {
		if b < a {
			return 0
		}
		return float64(b - a)
	}
	rios, wios := d(prev.ReadIOs, cur.ReadIOs), d(prev.WriteIOs, cur.WriteIOs)
	r := Rates{
		ReadsPerSec:   rios / sec,
		WritesPerSec:  wios / sec,
		ReadKBPerSec:  d(prev.ReadSectors, cur.ReadSectors) / 2 / sec,
		WriteKBPerSec: d(prev.WriteSectors, cur.WriteSectors) / 2 / sec,
		UtilPercent:   min(100, d(prev.IOTicks, cur.IOTicks)/(sec*1000)*100),
	}
	if rios > 0 {
		r.RAwaitMs = d(prev.ReadTicks, cur.ReadTicks) / rios
	}
	if wios > 0 {
		r.WAwaitMs = d(prev.WriteTicks, cur.WriteTicks) / wios
	}
	return r
}
