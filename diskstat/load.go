package diskstat

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spoold/spoold/internal/jsonfmt"
)

// DiskStatus is the disk load the daemon samples all the time: the block
// devices behind its directories as `iostat -x` shows them, next to what
// spoold itself read and wrote.
type DiskStatus struct {
	// SampledAt is when /proc/diskstats and /proc/self/io were last read;
	// zero before the first sample.
	SampledAt time.Time `json:"sampled_at"`
	// Interval is the span the rates cover: between the last two samples;
	// zero before the second.
	Interval time.Duration `json:"interval_seconds"`
	// Devices are the block devices behind the spool and RRD directories.
	Devices []DeviceLoad `json:"-"`
	// Process is /proc/self/io: the whole process, since it started.
	Process ProcessIO `json:"process"`
	// Cycles is what poll cycles' spool writes cost, Updates what the
	// writer's RRD updates cost, each measured on the thread doing it.
	Cycles  IOWork `json:"poll_cycles"`
	Updates IOWork `json:"rrd_updates"`
	// Error is the last sampling error; empty when the last sample was
	// read.
	Error string `json:"error"`
}

// DeviceLoad is one block device and its load over DiskStatus.Interval.
type DeviceLoad struct {
	// Name is the kernel's name as in /proc/diskstats (e.g. "vda1"), Disk
	// the whole disk that owns the queue (e.g. "vda"); both empty when
	// the directories are on no block device (tmpfs, overlay, NFS).
	Name string `json:"name"`
	Disk string `json:"disk"`
	// Dirs are the daemon's directories on this device.
	Dirs []string `json:"dirs"`
	// ReadAheadKB is the disk's read_ahead_kb; -1 when unknown.
	ReadAheadKB int   `json:"read_ahead_kb"`
	Rates       Rates `json:"-"` // flattened by MarshalJSON
	// Error says why the device is unknown or not sampled; empty if fine.
	Error string `json:"error"`
}

// ProcessIO is the process's own I/O counters (TaskIO): the
// totals since the daemon started and the storage rates over the interval.
type ProcessIO struct {
	Total            TaskIO  `json:"-"` // flattened by MarshalJSON
	ReadBytesPerSec  float64 `json:"read_bytes_per_second"`
	WriteBytesPerSec float64 `json:"write_bytes_per_second"`
}

// IOWork is what one kind of work read from and wrote to storage, each
// measured operation on its own OS thread (OnThread): a unit is a
// poll cycle (its operations: the spool entries it wrote) or an RRD update
// call (its operations: the rows it applied).
type IOWork struct {
	Units uint64  `json:"count"`
	Ops   uint64  `json:"operations"`
	Total BlockIO `json:"total"`
	// Last is the last unit: its operations, counters and end.
	LastOps uint64    `json:"last_operations"`
	Last    BlockIO   `json:"last"`
	LastAt  time.Time `json:"last_at"`
	// Unmeasured are operations run while the thread's counters could not
	// be read (no /proc/thread-self/io); they are in no figure above.
	Unmeasured uint64 `json:"unmeasured_operations"`
	// Unsampled are the operations of the units not measured (one unit in
	// Tally.Every is); they are in no figure above either.
	Unsampled uint64 `json:"unsampled_operations"`
}

// MarshalJSON renders DiskStatus by its tags (jsonfmt's times and
// durations), the devices as a list (empty, not null).
func (d DiskStatus) MarshalJSON() ([]byte, error) {
	return jsonfmt.Marshal(d, struct {
		Devices []DeviceLoad `json:"devices"`
	}{devicesOrEmpty(d.Devices)})
}

// MarshalJSON renders a device by its tags with its rates' members beside
// them.
func (v DeviceLoad) MarshalJSON() ([]byte, error) { return jsonfmt.Marshal(v, v.Rates) }

// MarshalJSON renders the process's rates with its counters' members
// beside them.
func (p ProcessIO) MarshalJSON() ([]byte, error) { return jsonfmt.Marshal(p, p.Total) }

// MarshalJSON renders IOWork by its tags (jsonfmt's times).
func (w IOWork) MarshalJSON() ([]byte, error) { return jsonfmt.Marshal(w) }

// Load is the daemon's always-on disk report: it samples
// /proc/diskstats for the block devices behind its directories and
// /proc/self/io every interval (Run, on the caller's goroutine), and
// tallies in Cycles and Updates what poll cycles and RRD updates read and
// wrote, each operation measured on its own thread (the daemon wraps its
// spool writer and librrd to call Tally.Measure). Status may be called
// from any goroutine.
type Load struct {
	interval time.Duration
	watcher  *Watcher
	selfIO   func() (TaskIO, error)

	mu        sync.Mutex
	loads     []DeviceLoad // as resolved, rates updated by sample
	base      TaskIO       // /proc/self/io when sampling began
	prev      TaskIO
	prevAt    time.Time
	process   ProcessIO
	sampledAt time.Time
	span      time.Duration
	err       string

	Cycles, Updates Tally
}

// NewLoad returns a report sampled every interval; resolve sets its
// devices.
func NewLoad(interval time.Duration) *Load {
	l := &Load{interval: interval, selfIO: ReadSelfIO, watcher: NewWatcher()}
	l.Cycles.Every, l.Updates.Every = CycleSampling, UpdateSampling
	l.Cycles.Slots, l.Updates.Slots = MeasureSlots, MeasureSlots
	return l
}

// MeasureSlots is how many operations of each of a Load's tallies are
// measured at once (Tally.Slots): a few threads held while they wait, not
// one for each of a cycle's polls in flight.
const MeasureSlots = 2

// A Load measures one poll cycle in CycleSampling and one RRD update in
// UpdateSampling (Tally.Every): at 48,000 interfaces every 30 s (16,000
// updates and 1,000 device polls a cycle) measuring each operation cost
// 5.5-6.6% of the daemon's CPU (docs/operations.md).
const (
	CycleSampling  = 4
	UpdateSampling = 16
)

// resolve finds the block device of each directory: directories on one
// device share its entry, a directory on none gets an entry with the error.
// It must be called before run.
func (l *Load) Resolve(dirs ...string) {
	byName := map[string]int{}
	var names []string
	for _, dir := range dirs {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		dev, err := DeviceOf(dir)
		if err != nil {
			l.loads = append(l.loads, DeviceLoad{Dirs: []string{dir}, ReadAheadKB: -1, Error: err.Error()})
			continue
		}
		if i, ok := byName[dev.Name]; ok {
			l.loads[i].Dirs = append(l.loads[i].Dirs, dir)
			continue
		}
		byName[dev.Name] = len(l.loads)
		l.loads = append(l.loads, DeviceLoad{Name: dev.Name, Disk: dev.Disk, Dirs: []string{dir}, ReadAheadKB: dev.ReadAheadKB})
		names = append(names, dev.Name)
	}
	l.watcher = NewWatcher(names...)
}

// Run samples every interval until ctx ends. The caller takes the first
// sample, the baseline of the process's totals, before the work it counts
// starts.
func (l *Load) Run(ctx context.Context) error {
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			l.Sample()
		}
	}
}

// sample reads the device counters and the process's, and the disks'
// read-ahead (an operator may change it while spoold runs).
func (l *Load) Sample() {
	rates, span, werr := l.watcher.Next()
	self, serr := l.selfIO()
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.err = ""
	if err := errors.Join(werr, serr); err != nil {
		l.err = strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	for i := range l.loads {
		v := &l.loads[i]
		if v.Name == "" {
			continue
		}
		v.Rates = rates[v.Name]
		v.ReadAheadKB = ReadAheadKB(v.Disk)
	}
	if serr == nil {
		if l.prevAt.IsZero() {
			l.base = self
		} else if dt := now.Sub(l.prevAt).Seconds(); dt > 0 {
			d := self.Sub(l.prev)
			l.process.ReadBytesPerSec, l.process.WriteBytesPerSec = float64(d.ReadBytes)/dt, float64(d.WriteBytes)/dt
		}
		l.process.Total = self.Sub(l.base)
		l.prev, l.prevAt = self, now
	}
	if werr == nil {
		l.sampledAt, l.span = now, span
	}
}

// status is the report for admin.Status.
func (l *Load) Status() DiskStatus {
	l.mu.Lock()
	s := DiskStatus{
		SampledAt: l.sampledAt, Interval: l.span, Process: l.process, Error: l.err,
		Devices: make([]DeviceLoad, len(l.loads)),
	}
	for i, v := range l.loads {
		v.Dirs = append([]string(nil), v.Dirs...)
		s.Devices[i] = v
	}
	l.mu.Unlock()
	s.Cycles, s.Updates = l.Cycles.Get(), l.Updates.Get()
	return s
}

// Tally adds up the thread I/O of operations into units: the spool
// writes of a poll cycle, or one RRD update call. It measures one unit in
// Every (0 and 1: each): a measured operation runs with its goroutine
// locked to its thread (OnThread), and a goroutine that waits while locked
// (a contended mutex, a GC pause) hands its thread and P over twice. At a
// fleet's rate that costs more than the counters (docs/operations.md), and
// a sample shows what a unit costs as well. The operations of the units
// not measured run as they are and count as IOWork.Unsampled.
type Tally struct {
	Every uint64 // set before the first operation
	// Slots bounds the operations measured at once (0: no bound), set
	// before the first operation. An operation of a measured unit that
	// finds every slot taken runs unmeasured and counts as unsampled (a
	// whole unit's measuring passes to the next unit). A measured
	// operation that waits holds its thread meanwhile, and the runtime
	// starts another for its P: a measured poll cycle's hundreds of polls
	// in flight, each waiting on a spool lock, made a thread each, kept
	// for the life of the process.
	Slots     int64
	measuring atomic.Int64

	mu      sync.Mutex
	w       IOWork
	open    BlockIO // of the unit in progress
	openOps uint64
	// units counts the units begun: each MeasureUnit, or the unit in
	// progress of Measure (one more at each CloseUnit).
	units     atomic.Uint64
	unsampled atomic.Uint64 // IOWork.Unsampled, without the lock
	// owed says that the unit to measure did nothing (no operations):
	// the next one is measured instead.
	owed atomic.Bool
}

// nextUnit begins a whole unit and reports whether it is measured.
func (t *Tally) nextUnit() bool {
	return t.sampled(t.units.Add(1)-1) || t.owed.Load() && t.owed.CompareAndSwap(true, false)
}

// sampled reports whether unit number n (from 0) is measured.
func (t *Tally) sampled(n uint64) bool { return t.Every <= 1 || n%t.Every == 0 }

// Measure runs fn, an operation of the unit in progress that counts as ops
// operations, and adds its I/O to the unit if the unit is measured.
func (t *Tally) Measure(ops uint64, fn func() error) error {
	return t.run(&ops, fn, false, t.sampled(t.units.Load()))
}

// MeasureUnit is a whole unit of ops operations: it runs fn and, if the
// unit is measured, records it as the last unit. A unit of no operations
// (an update that found nothing to do) is none: if it was the one to
// measure, the next unit is measured instead.
func (t *Tally) MeasureUnit(ops uint64, fn func() error) error {
	return t.run(&ops, fn, true, t.nextUnit())
}

// MeasureUnitOf is MeasureUnit of a unit whose operations fn counts
// as it runs.
func (t *Tally) MeasureUnitOf(fn func() (ops uint64, err error)) error {
	var ops uint64
	return t.run(&ops, func() (err error) {
		ops, err = fn()
		return err
	}, true, t.nextUnit())
}

// run runs fn, which leaves the operations it counts as in *ops.
func (t *Tally) run(ops *uint64, fn func() error, whole, measured bool) error {
	if measured && t.Slots > 0 {
		if t.measuring.Add(1) > t.Slots {
			measured = false
			if whole {
				t.owed.Store(true)
			}
		}
		defer t.measuring.Add(-1)
	}
	if !measured {
		err := fn()
		t.unsampled.Add(*ops)
		return err
	}
	d, ok, err := OnThread(fn)
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case whole && *ops == 0:
		t.owed.Store(true)
	case !ok:
		t.w.Unmeasured += *ops
	case whole:
		t.record(d, *ops, time.Now())
	default:
		t.open, t.openOps = t.open.Add(d), t.openOps+*ops
	}
	return err
}

// CloseUnit ends the unit in progress at time at: recorded if it was
// measured. Measure's operations until the next CloseUnit belong to the
// next unit.
func (t *Tally) CloseUnit(at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.sampled(t.units.Add(1) - 1) {
		t.record(t.open, t.openOps, at)
	} else {
		// a poll that began while the last unit was open was measured
		t.unsampled.Add(t.openOps)
	}
	t.open, t.openOps = BlockIO{}, 0
}

// record adds a finished unit; t.mu is held.
func (t *Tally) record(d BlockIO, ops uint64, at time.Time) {
	t.w.Units++
	t.w.Ops += ops
	t.w.Total = t.w.Total.Add(d)
	t.w.Last, t.w.LastOps, t.w.LastAt = d, ops, at
}

func (t *Tally) Get() IOWork {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.w
	w.Unsampled = t.unsampled.Load()
	return w
}

// devicesOrEmpty is d, or an empty list (JSON [], not null) for nil.
func devicesOrEmpty(d []DeviceLoad) []DeviceLoad {
	if d == nil {
		return []DeviceLoad{}
	}
	return d
}
