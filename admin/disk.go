package admin

import (
	"strconv"
	"strings"
	"time"

	"github.com/spoold/spoold/diskstat"
)

// DiskStatus is the disk load the daemon samples all the time: the block
// devices behind its directories as `iostat -x` shows them, next to what
// spoold itself read and wrote.
type DiskStatus struct {
	// SampledAt is when /proc/diskstats and /proc/self/io were last read;
	// zero before the first sample.
	SampledAt time.Time
	// Interval is the span the rates cover: between the last two samples;
	// zero before the second.
	Interval time.Duration
	// Devices are the block devices behind the spool and RRD directories.
	Devices []DeviceLoad
	// Process is /proc/self/io: the whole process, since it started.
	Process ProcessIO
	// Cycles is what poll cycles' spool writes cost, Updates what the
	// writer's RRD updates cost, each measured on the thread doing it.
	Cycles, Updates IOWork
	// Error is the last sampling error; empty when the last sample was
	// read.
	Error string
}

// DeviceLoad is one block device and its load over DiskStatus.Interval.
type DeviceLoad struct {
	// Name is the kernel's name as in /proc/diskstats (e.g. "vda1"), Disk
	// the whole disk that owns the queue (e.g. "vda"); both empty when
	// the directories are on no block device (tmpfs, overlay, NFS).
	Name, Disk string
	// Dirs are the daemon's directories on this device.
	Dirs []string
	// ReadAheadKB is the disk's read_ahead_kb; -1 when unknown.
	ReadAheadKB int
	Rates       diskstat.Rates
	// Error says why the device is unknown or not sampled; empty if fine.
	Error string
}

// ProcessIO is the process's own I/O counters (diskstat.TaskIO): the
// totals since the daemon started and the storage rates over the interval.
type ProcessIO struct {
	Total                             diskstat.TaskIO
	ReadBytesPerSec, WriteBytesPerSec float64
}

// IOWork is what one kind of work read from and wrote to storage, each
// operation measured on its own OS thread (diskstat.OnThread): a unit is a
// poll cycle (its operations: the spool entries it wrote) or an RRD update
// call (its operations: the rows it applied).
type IOWork struct {
	Units, Ops uint64
	Total      diskstat.TaskIO
	// Last is the last unit: its operations, counters and end.
	LastOps uint64
	Last    diskstat.TaskIO
	LastAt  time.Time
	// Unmeasured are operations run while the thread's counters could not
	// be read (no /proc/thread-self/io); they are in no figure above.
	Unmeasured uint64
}

type diskDoc struct {
	SampledAt jsonTime     `json:"sampled_at"`
	Interval  seconds      `json:"interval_seconds"`
	Devices   []deviceDoc  `json:"devices"`
	Process   processIODoc `json:"process"`
	Cycles    ioWorkDoc    `json:"poll_cycles"`
	Updates   ioWorkDoc    `json:"rrd_updates"`
	Error     string       `json:"error"`
}

type deviceDoc struct {
	Name        string   `json:"name"`
	Disk        string   `json:"disk"`
	Dirs        []string `json:"dirs"`
	ReadAheadKB int      `json:"read_ahead_kb"`
	diskstat.Rates
	Error string `json:"error"`
}

type processIODoc struct {
	diskstat.TaskIO
	ReadBytesPerSec  float64 `json:"read_bytes_per_second"`
	WriteBytesPerSec float64 `json:"write_bytes_per_second"`
}

type ioWorkDoc struct {
	Units      uint64          `json:"count"`
	Ops        uint64          `json:"operations"`
	Total      diskstat.TaskIO `json:"total"`
	LastOps    uint64          `json:"last_operations"`
	Last       diskstat.TaskIO `json:"last"`
	LastAt     jsonTime        `json:"last_at"`
	Unmeasured uint64          `json:"unmeasured_operations"`
}

func diskDocOf(d DiskStatus) diskDoc {
	doc := diskDoc{
		SampledAt: jsonTime(d.SampledAt), Interval: seconds(d.Interval),
		Devices: make([]deviceDoc, 0, len(d.Devices)),
		Process: processIODoc{d.Process.Total, d.Process.ReadBytesPerSec, d.Process.WriteBytesPerSec},
		Cycles:  ioWorkDocOf(d.Cycles), Updates: ioWorkDocOf(d.Updates), Error: d.Error,
	}
	for _, v := range d.Devices {
		doc.Devices = append(doc.Devices, deviceDoc{v.Name, v.Disk, v.Dirs, v.ReadAheadKB, v.Rates, v.Error})
	}
	return doc
}

func ioWorkDocOf(w IOWork) ioWorkDoc {
	return ioWorkDoc{w.Units, w.Ops, w.Total, w.LastOps, w.Last, jsonTime(w.LastAt), w.Unmeasured}
}

func diskMetrics(e *expo, s Status) {
	d := s.Disk
	e.gauge("spoold_disk_sample_interval_seconds", "Span of the disk rates: between the last two samples of /proc/diskstats; 0 before the second.", d.Interval.Seconds())
	const info = "spoold_disk_info"
	e.family(info, "gauge", "Always 1: the block device (as in /proc/diskstats) and whole disk behind each of the daemon's directories.")
	for _, v := range d.Devices {
		for _, dir := range v.Dirs {
			e.sample(info, 1, "device", v.Name, "disk", v.Disk, "dir", dir)
		}
	}
	for _, m := range []struct {
		name, help string
		v          func(DeviceLoad) float64
	}{
		{"spoold_disk_reads_per_second", "iostat r/s: reads completed per second.", func(v DeviceLoad) float64 { return v.Rates.ReadsPerSec }},
		{"spoold_disk_writes_per_second", "iostat w/s: writes completed per second.", func(v DeviceLoad) float64 { return v.Rates.WritesPerSec }},
		{"spoold_disk_read_bytes_per_second", "iostat rkB/s in bytes.", func(v DeviceLoad) float64 { return v.Rates.ReadKBPerSec * 1024 }},
		{"spoold_disk_written_bytes_per_second", "iostat wkB/s in bytes.", func(v DeviceLoad) float64 { return v.Rates.WriteKBPerSec * 1024 }},
		{"spoold_disk_read_await_seconds", "iostat r_await: mean time of a completed read, queue included.", func(v DeviceLoad) float64 { return v.Rates.RAwaitMs / 1000 }},
		{"spoold_disk_write_await_seconds", "iostat w_await: mean time of a completed write, queue included.", func(v DeviceLoad) float64 { return v.Rates.WAwaitMs / 1000 }},
		{"spoold_disk_utilization_ratio", "iostat %util / 100: share of the interval the device had I/O in flight.", func(v DeviceLoad) float64 { return v.Rates.UtilPercent / 100 }},
	} {
		e.family(m.name, "gauge", m.help)
		for _, v := range d.Devices {
			if v.Name != "" && v.Error == "" {
				e.sample(m.name, m.v(v), "device", v.Name)
			}
		}
	}
	const ra = "spoold_disk_read_ahead_bytes"
	e.family(ra, "gauge", "The disk's read-ahead (/sys/block/<disk>/queue/read_ahead_kb) in bytes.")
	for _, v := range d.Devices {
		if v.Disk != "" && v.ReadAheadKB >= 0 {
			e.sample(ra, float64(v.ReadAheadKB)*1024, "disk", v.Disk)
		}
	}
	p := d.Process.Total
	e.counter("spoold_process_io_read_bytes_total", "/proc/self/io read_bytes since the daemon started: bytes it caused to be read from storage.", p.ReadBytes)
	e.counter("spoold_process_io_written_bytes_total", "/proc/self/io write_bytes since the daemon started: bytes of page cache it dirtied (sent to storage on write-back).", p.WriteBytes)
	e.counter("spoold_process_io_read_chars_total", "/proc/self/io rchar since the daemon started: bytes of read syscalls, cached or not.", p.RChar)
	e.counter("spoold_process_io_written_chars_total", "/proc/self/io wchar since the daemon started: bytes of write syscalls.", p.WChar)
	ioWorkMetrics(e, "spoold_poller_cycle_io", "poll cycles' spool writes", "spool entries written", d.Cycles)
	ioWorkMetrics(e, "spoold_writer_update_io", "the writer's RRD update calls", "rows applied", d.Updates)
}

func ioWorkMetrics(e *expo, prefix, what, ops string, w IOWork) {
	e.counter(prefix+"_units_total", "Measured "+what+".", w.Units)
	e.counter(prefix+"_operations_total", "Operations ("+ops+") of the measured "+what+".", w.Ops)
	e.counter(prefix+"_read_bytes_total", "Bytes read from storage by "+what+", on their own threads.", w.Total.ReadBytes)
	e.counter(prefix+"_written_bytes_total", "Bytes of page cache dirtied by "+what+", on their own threads.", w.Total.WriteBytes)
	e.gauge(prefix+"_last_read_bytes", "Bytes read from storage by the last of "+what+".", float64(w.Last.ReadBytes))
	e.gauge(prefix+"_last_written_bytes", "Bytes of page cache dirtied by the last of "+what+".", float64(w.Last.WriteBytes))
	e.counter(prefix+"_unmeasured_operations_total", "Operations of "+what+" run without thread I/O counters.", w.Unmeasured)
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
