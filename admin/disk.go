package admin

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/spoold/spoold/diskstat"
	"github.com/spoold/spoold/internal/statmetric"
)

// The disk report's types are diskstat's, which samples them; admin shows
// them.
type (
	DiskStatus = diskstat.DiskStatus
	DeviceLoad = diskstat.DeviceLoad
	ProcessIO  = diskstat.ProcessIO
	IOWork     = diskstat.IOWork
)

// diskMetrics are the disk figures of the metrics.
var diskMetrics = slices.Concat(statmetric.Table[DiskStatus]{
	statmetric.Gauge("spoold_disk_sample_interval_seconds", "Span of the disk rates: between the last two samples of /proc/diskstats; 0 before the second.",
		func(d DiskStatus) float64 { return d.Interval.Seconds() }),
	statmetric.Vec("spoold_disk_info", "Always 1: the block device (as in /proc/diskstats) and whole disk behind each of the daemon's directories.",
		prometheus.GaugeValue, []string{"device", "disk", "dir"}, func(d DiskStatus, emit statmetric.Emit) {
			for _, v := range d.Devices {
				for _, dir := range v.Dirs {
					emit(1, v.Name, v.Disk, dir)
				}
			}
		}),
	deviceRate("spoold_disk_reads_per_second", "iostat r/s: reads completed per second.", func(r diskstat.Rates) float64 { return r.ReadsPerSec }),
	deviceRate("spoold_disk_writes_per_second", "iostat w/s: writes completed per second.", func(r diskstat.Rates) float64 { return r.WritesPerSec }),
	deviceRate("spoold_disk_read_bytes_per_second", "iostat rkB/s in bytes.", func(r diskstat.Rates) float64 { return r.ReadKBPerSec * 1024 }),
	deviceRate("spoold_disk_written_bytes_per_second", "iostat wkB/s in bytes.", func(r diskstat.Rates) float64 { return r.WriteKBPerSec * 1024 }),
	deviceRate("spoold_disk_read_await_seconds", "iostat r_await: mean time of a completed read, queue included.", func(r diskstat.Rates) float64 { return r.RAwaitMs / 1000 }),
	deviceRate("spoold_disk_write_await_seconds", "iostat w_await: mean time of a completed write, queue included.", func(r diskstat.Rates) float64 { return r.WAwaitMs / 1000 }),
	deviceRate("spoold_disk_utilization_ratio", "iostat %util / 100: share of the interval the device had I/O in flight.", func(r diskstat.Rates) float64 { return r.UtilPercent / 100 }),
	statmetric.Vec("spoold_disk_read_ahead_bytes", "The disk's read-ahead (/sys/block/<disk>/queue/read_ahead_kb) in bytes.",
		prometheus.GaugeValue, []string{"disk"}, func(d DiskStatus, emit statmetric.Emit) {
			for _, v := range d.Devices {
				if v.Disk != "" && v.ReadAheadKB >= 0 {
					emit(float64(v.ReadAheadKB)*1024, v.Disk)
				}
			}
		}),
	statmetric.Counter("spoold_process_io_read_bytes_total", "/proc/self/io read_bytes since the daemon started: bytes it caused to be read from storage.",
		func(d DiskStatus) uint64 { return d.Process.Total.ReadBytes }),
	statmetric.Counter("spoold_process_io_written_bytes_total", "/proc/self/io write_bytes since the daemon started: bytes of page cache it dirtied (sent to storage on write-back).",
		func(d DiskStatus) uint64 { return d.Process.Total.WriteBytes }),
	statmetric.Counter("spoold_process_io_read_chars_total", "/proc/self/io rchar since the daemon started: bytes of read syscalls, cached or not.",
		func(d DiskStatus) uint64 { return d.Process.Total.RChar }),
	statmetric.Counter("spoold_process_io_written_chars_total", "/proc/self/io wchar since the daemon started: bytes of write syscalls.",
		func(d DiskStatus) uint64 { return d.Process.Total.WChar }),
},
	ioWorkMetrics("spoold_poller_cycle_io", "poll cycles' spool writes", "spool entries written", func(d DiskStatus) IOWork { return d.Cycles }),
	ioWorkMetrics("spoold_writer_update_io", "the writer's RRD update calls", "rows applied", func(d DiskStatus) IOWork { return d.Updates }),
)

// deviceRate is an iostat rate of each device that has one: a block device
// sampled without an error.
func deviceRate(name, help string, v func(diskstat.Rates) float64) statmetric.Metric[DiskStatus] {
	return statmetric.Vec(name, help, prometheus.GaugeValue, []string{"device"}, func(d DiskStatus, emit statmetric.Emit) {
		for _, dl := range d.Devices {
			if dl.Name != "" && dl.Error == "" {
				emit(v(dl.Rates), dl.Name)
			}
		}
	})
}

// ioWorkMetrics are the metrics of one kind of IOWork, named prefix_*.
func ioWorkMetrics(prefix, what, ops string, work func(DiskStatus) IOWork) statmetric.Table[DiskStatus] {
	counter := func(suffix, help string, v func(IOWork) uint64) statmetric.Metric[DiskStatus] {
		return statmetric.Counter(prefix+suffix, help, func(d DiskStatus) uint64 { return v(work(d)) })
	}
	gauge := func(suffix, help string, v func(IOWork) uint64) statmetric.Metric[DiskStatus] {
		return statmetric.Gauge(prefix+suffix, help, func(d DiskStatus) float64 { return float64(v(work(d))) })
	}
	return statmetric.Table[DiskStatus]{
		counter("_units_total", "Measured "+what+".", func(w IOWork) uint64 { return w.Units }),
		counter("_operations_total", "Operations ("+ops+") of the measured "+what+".", func(w IOWork) uint64 { return w.Ops }),
		counter("_read_bytes_total", "Bytes read from storage by "+what+", on their own threads.", func(w IOWork) uint64 { return w.Total.ReadBytes }),
		counter("_written_bytes_total", "Bytes of page cache dirtied by "+what+", on their own threads.", func(w IOWork) uint64 { return w.Total.WriteBytes }),
		gauge("_last_read_bytes", "Bytes read from storage by the last of "+what+".", func(w IOWork) uint64 { return w.Last.ReadBytes }),
		gauge("_last_written_bytes", "Bytes of page cache dirtied by the last of "+what+".", func(w IOWork) uint64 { return w.Last.WriteBytes }),
		counter("_unmeasured_operations_total", "Operations of "+what+" run without thread I/O counters.", func(w IOWork) uint64 { return w.Unmeasured }),
		counter("_unsampled_operations_total", "Operations of "+what+" in units not measured (a sample of the units is).", func(w IOWork) uint64 { return w.Unsampled }),
	}
}

// diskView is the page's disk card.
type diskView struct {
	Interval string
	Devices  []deviceView
	// Process, Cycle and Update are one-line summaries.
	Process, Cycle, Update string
	Error                  string
}

type deviceView struct {
	Name, Dirs, ReadAhead, Error string
	Reads, Writes, Await         string
	Util                         float64 // 0..1
}

func diskViewOf(d DiskStatus, now time.Time) diskView {
	v := diskView{Error: d.Error, Interval: "no sample yet"}
	if d.Interval > 0 {
		v.Interval = "over " + humanDuration(d.Interval) + ", " + ago(now, d.SampledAt)
	}
	for _, dl := range d.Devices {
		dv := deviceView{Name: dl.Name, Dirs: strings.Join(dl.Dirs, ", "), Error: dl.Error, Util: dl.Rates.UtilPercent / 100}
		if dl.Name == "" {
			dv.Name = "no block device"
		}
		if dl.ReadAheadKB >= 0 {
			dv.ReadAhead = strconv.Itoa(dl.ReadAheadKB) + " KiB read-ahead"
		}
		r := dl.Rates
		dv.Reads = rate(r.ReadsPerSec) + " r/s · " + humanBytes(int64(r.ReadKBPerSec*1024)) + "/s"
		dv.Writes = rate(r.WritesPerSec) + " w/s · " + humanBytes(int64(r.WriteKBPerSec*1024)) + "/s"
		dv.Await = "r " + rate(r.RAwaitMs) + " ms · w " + rate(r.WAwaitMs) + " ms"
		v.Devices = append(v.Devices, dv)
	}
	p := d.Process
	v.Process = "read " + humanBytes(int64(p.ReadBytesPerSec)) + "/s · wrote " + humanBytes(int64(p.WriteBytesPerSec)) +
		"/s; since start read " + humanBytes(int64(p.Total.ReadBytes)) + " · wrote " + humanBytes(int64(p.Total.WriteBytes))
	v.Cycle = "none yet"
	if c := d.Cycles; c.Units > 0 {
		v.Cycle = "last: " + strconv.FormatUint(c.LastOps, 10) + " entries · read " + humanBytes(int64(c.Last.ReadBytes)) +
			" · wrote " + humanBytes(int64(c.Last.WriteBytes)) + "; " + strconv.FormatUint(c.Units, 10) + " cycles: wrote " +
			humanBytes(int64(c.Total.WriteBytes))
	}
	v.Update = "none yet"
	if u := d.Updates; u.Units > 0 {
		v.Update = "mean read " + humanBytes(int64(u.Total.ReadBytes/u.Units)) + " · wrote " + humanBytes(int64(u.Total.WriteBytes/u.Units)) +
			" per update (" + strconv.FormatUint(u.Units, 10) + " updates); last read " + humanBytes(int64(u.Last.ReadBytes)) +
			" · wrote " + humanBytes(int64(u.Last.WriteBytes))
	}
	return v
}

// rate formats a per-second figure for the page: one decimal below 10.
func rate(f float64) string {
	if f < 10 {
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'f', 0, 64)
}
