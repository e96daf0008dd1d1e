package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spoold/spoold/admin"
	"github.com/spoold/spoold/diskstat"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/spool"
)

// diskLoad is the daemon's always-on disk report: it samples
// /proc/diskstats for the block devices behind the spool and RRD
// directories and /proc/self/io every interval (run, on the goroutine the
// daemon starts), and tallies what poll cycles and RRD updates read and
// wrote, each operation measured on its own thread (meteredSpool,
// meteredRRD).
type diskLoad struct {
	interval time.Duration
	watcher  *diskstat.Watcher
	selfIO   func() (diskstat.TaskIO, error)

	mu        sync.Mutex
	loads     []admin.DeviceLoad // as resolved, rates updated by sample
	base      diskstat.TaskIO    // /proc/self/io when sampling began
	prev      diskstat.TaskIO
	prevAt    time.Time
	process   admin.ProcessIO
	sampledAt time.Time
	span      time.Duration
	err       string

	cycles, updates ioTally
}

// newDiskLoad returns a report sampled every interval; resolve sets its
// devices.
func newDiskLoad(interval time.Duration) *diskLoad {
	return &diskLoad{interval: interval, selfIO: diskstat.ReadSelfIO, watcher: diskstat.NewWatcher()}
}

// resolve finds the block device of each directory: directories on one
// device share its entry, a directory on none gets an entry with the error.
// It must be called before run.
func (l *diskLoad) resolve(dirs ...string) {
	byName := map[string]int{}
	var names []string
	for _, dir := range dirs {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		dev, err := diskstat.DeviceOf(dir)
		if err != nil {
			l.loads = append(l.loads, admin.DeviceLoad{Dirs: []string{dir}, ReadAheadKB: -1, Error: err.Error()})
			continue
		}
		if i, ok := byName[dev.Name]; ok {
			l.loads[i].Dirs = append(l.loads[i].Dirs, dir)
			continue
		}
		byName[dev.Name] = len(l.loads)
		l.loads = append(l.loads, admin.DeviceLoad{Name: dev.Name, Disk: dev.Disk, Dirs: []string{dir}, ReadAheadKB: dev.ReadAheadKB})
		names = append(names, dev.Name)
	}
	l.watcher = diskstat.NewWatcher(names...)
}

// run samples every interval until ctx ends. The caller takes the first
// sample, the baseline of the process's totals, before the work it counts
// starts.
func (l *diskLoad) run(ctx context.Context) error {
	t := time.NewTicker(l.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			l.sample()
		}
	}
}

// sample reads the device counters and the process's, and the disks'
// read-ahead (an operator may change it while spoold runs).
func (l *diskLoad) sample() {
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
		v.ReadAheadKB = diskstat.ReadAheadKB(v.Disk)
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
func (l *diskLoad) status() admin.DiskStatus {
	l.mu.Lock()
	s := admin.DiskStatus{
		SampledAt: l.sampledAt, Interval: l.span, Process: l.process, Error: l.err,
		Devices: make([]admin.DeviceLoad, len(l.loads)),
	}
	for i, v := range l.loads {
		v.Dirs = append([]string(nil), v.Dirs...)
		s.Devices[i] = v
	}
	l.mu.Unlock()
	s.Cycles, s.Updates = l.cycles.get(), l.updates.get()
	return s
}

// ioTally adds up the thread I/O of operations into units: the spool
// writes of a poll cycle, or one RRD update call.
type ioTally struct {
	mu      sync.Mutex
	w       admin.IOWork
	open    diskstat.TaskIO // of the unit in progress
	openOps uint64
}

// measure runs fn, an operation of the unit in progress that counts as ops
// operations, on its own thread and adds its I/O to the unit.
func (t *ioTally) measure(ops uint64, fn func() error) error { return t.run(ops, fn, false) }

// measureUnit is a whole unit of one operation: it runs fn on its own
// thread and records it as the last unit.
func (t *ioTally) measureUnit(ops uint64, fn func() error) error { return t.run(ops, fn, true) }

func (t *ioTally) run(ops uint64, fn func() error, whole bool) error {
	d, ok, err := diskstat.OnThread(fn)
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case !ok:
		t.w.Unmeasured += ops
	case whole:
		t.record(d, ops, time.Now())
	default:
		t.open, t.openOps = t.open.Add(d), t.openOps+ops
	}
	return err
}

// closeUnit ends the unit in progress at time at.
func (t *ioTally) closeUnit(at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.record(t.open, t.openOps, at)
	t.open, t.openOps = diskstat.TaskIO{}, 0
}

// record adds a finished unit; t.mu is held.
func (t *ioTally) record(d diskstat.TaskIO, ops uint64, at time.Time) {
	t.w.Units++
	t.w.Ops += ops
	t.w.Total = t.w.Total.Add(d)
	t.w.Last, t.w.LastOps, t.w.LastAt = d, ops, at
}

func (t *ioTally) get() admin.IOWork {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.w
}

// meteredSpool is the poller's spool writer with each entry write and each
// end-of-cycle sync measured into a tally; the daemon closes the tally's
// unit at the end of each cycle (poller.Options.OnCycle).
type meteredSpool struct {
	poller.Writer
	t *ioTally
}

func (m meteredSpool) Append(e *spool.Entry) (ref spool.Ref, created bool, err error) {
	err = m.t.measure(1, func() error {
		ref, created, err = m.Writer.Append(e)
		return err
	})
	return ref, created, err
}

func (m meteredSpool) Sync() error { return m.t.measure(0, m.Writer.Sync) }

// meteredRRD is librrd with each update call measured as one unit of a
// tally, its rows the operations.
type meteredRRD struct {
	rrdwriter.RRD
	t *ioTally
}

func (m meteredRRD) Update(path string, template []string, rows []rrdwriter.Row) error {
	return m.t.measureUnit(uint64(len(rows)), func() error { return m.RRD.Update(path, template, rows) })
}
