package diskstat

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
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

// ParseDiskstats parses the text of /proc/diskstats. Lines have 14 fields on
// old kernels and 18 or 20 on newer ones (discard and flush counters, not
// kept); fewer than 14 is an error.
func ParseDiskstats(r io.Reader) ([]Stat, error) {
	var out []Stat
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 14 {
			return nil, fmt.Errorf("diskstats line %d: %d fields, want at least 14", line, len(f))
		}
		var n [13]uint64
		for i := range n {
			if i == 2 {
				continue // the name
			}
			v, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("diskstats line %d field %d: %w", line, i+1, err)
			}
			n[i] = v
		}
		out = append(out, Stat{
			Major: uint32(n[0]), Minor: uint32(n[1]), Name: f[2],
			ReadIOs: n[3], ReadMerges: n[4], ReadSectors: n[5], ReadTicks: n[6],
			WriteIOs: n[7], WriteMerges: n[8], WriteSectors: n[9], WriteTicks: n[10],
			InFlight: n[11], IOTicks: n[12], TimeInQueue: mustUint(f[13]),
		})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read diskstats: %w", err)
	}
	return out, nil
}

func mustUint(s string) uint64 {
	v, _ := strconv.ParseUint(s, 10, 64)
	return v
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
func ReadSample() (Sample, error) {
	f, err := os.Open("/proc/diskstats")
	if err != nil {
		return Sample{}, err
	}
	defer f.Close()
	t := time.Now()
	st, err := ParseDiskstats(f)
	return Sample{Time: t, Stats: st}, err
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
