package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spoold/spoold/diskstat"
	"github.com/spoold/spoold/spool"
	"golang.org/x/sys/unix"
)

// firstPoll is the poll time of the first cycle; cycles are 300 s apart.
const firstPoll = 1_700_000_000

// target is one simulated device: its key and the spool files of its polls.
type target struct {
	key  string
	hash uint64
	refs []spool.Ref
}

// runRound writes every poll of every target into a fresh spool in dir,
// drains it, and removes it again.
func runRound(c config, devName, dir, mode string) (round, error) {
	so := spool.DefaultOptions()
	so.Dir = dir
	so.PrecreateDirs = true // as cmd/spoold opens the spool
	if mode == "segfd" {
		// A descriptor held for every target: twice their number, so
		// that no shard of the spool's held descriptors fills up.
		so.SegmentOpenFiles = min(2*c.targets, spool.MaxSegmentOpenFiles)
	}
	sp, err := spool.Open(so)
	if err != nil {
		return round{}, err
	}
	defer sp.Close()
	ts := make([]target, c.targets)
	for i := range ts {
		ts[i].key = fmt.Sprintf("dev%05d", i)
		ts[i].hash = spool.KeyHash(ts[i].key)
	}
	polls := float64(c.targets * c.polls)
	r := round{Mode: mode}

	m, err := measure(dir, devName, func() error { return writePolls(c, sp, mode, ts, &r) })
	if err != nil {
		return round{}, err
	}
	r.WriteUs, r.WriteCPUUs = us(m.wall)/polls, us(m.cpu)/polls
	r.WriteKiB, r.WriteSyncMs, r.DeviceWriteIO = m.kib/polls, ms(m.sync), float64(m.ios)
	for _, t := range ts {
		r.Files += len(t.refs)
	}

	m, err = measure(dir, devName, func() error { return drain(sp, mode, ts, &r) })
	if err != nil {
		return round{}, err
	}
	r.DrainUs, r.DrainCPUUs = us(m.wall)/polls, us(m.cpu)/polls
	r.DrainKiB, r.DrainSyncMs = m.kib/polls, ms(m.sync)
	r.DrainReadUs, r.DrainUnlinkUs = us(r.readTime)/polls, us(r.unlinkTime)/polls
	if r.EntriesRead != c.targets*c.polls {
		return round{}, fmt.Errorf("drained %d entries; want %d", r.EntriesRead, c.targets*c.polls)
	}
	if err := sp.Close(); err != nil {
		return round{}, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return round{}, fmt.Errorf("remove scratch spool: %w", err)
	}
	_, err = syncfs(filepath.Dir(dir)) // the next round starts from a clean file system
	return r, err
}

// writePolls makes every poll, cycle by cycle, in the poller's order.
func writePolls(c config, sp *spool.Spool, mode string, ts []target, r *round) error {
	vals := make([]spool.Value, c.counters)
	for i := range vals {
		vals[i] = spool.Value{Name: fmt.Sprintf("ds%02d", i), Type: spool.Counter}
	}
	for p := range c.polls {
		for i := range ts {
			t := &ts[i]
			for j := range vals {
				vals[j].Counter = uint64(p)*1_000_003 + uint64(i*len(vals)+j)*977
			}
			e := spool.Entry{Key: t.key, Time: firstPoll + 300*int64(p), Milli: uint16((i * 7) % 1000), Values: vals}
			r.EntryBytes = e.EncodedLen()
			switch mode {
			case "file":
				ref, err := sp.Write(&e)
				if err != nil {
					return err
				}
				t.refs = append(t.refs, ref)
			default: // seg, segfd
				ref, created, err := sp.Append(&e)
				if err != nil {
					return err
				}
				if created {
					t.refs = append(t.refs, ref)
				}
			}
		}
	}
	return nil
}

// drain reads and removes every spool file of every target, target by
// target, as the writer does: one level directory opened per target, the
// segments decoded into one reused buffer, Reset after each target.
func drain(sp *spool.Spool, mode string, ts []target, r *round) error {
	var buf spool.SegmentBuffer
	for i := range ts {
		t := &ts[i]
		if mode != "file" {
			sp.Seal(t.hash)
		}
		d, err := sp.OpenDir(t.hash)
		if err != nil {
			return err
		}
		for _, ref := range t.refs {
			t0 := time.Now()
			if err := readOne(d, mode, ref, &buf, r); err != nil {
				d.Close()
				return err
			}
			t1 := time.Now()
			if err := d.Remove(ref); err != nil {
				d.Close()
				return err
			}
			r.readTime += t1.Sub(t0)
			r.unlinkTime += time.Since(t1)
		}
		if err := d.Close(); err != nil {
			return err
		}
		buf.Reset() // as the writer's pass does when it is done with a key
	}
	return nil
}

func readOne(d *spool.Dir, mode string, ref spool.Ref, buf *spool.SegmentBuffer, r *round) error {
	if mode == "file" {
		if _, err := d.Read(ref); err != nil {
			return err
		}
		r.EntriesRead++
		return nil
	}
	g, err := d.ReadSegmentInto(ref, buf)
	if err != nil {
		return err
	}
	if len(g.Bad) > 0 {
		return fmt.Errorf("segment %s: bad range at %d: %s", g.Path, g.Bad[0].Offset, g.Bad[0].Reason)
	}
	r.EntriesRead += len(g.Entries)
	return nil
}

// measured is the cost of one phase: its wall and CPU time, then the
// syncfs after it, and what the device wrote over both.
type measured struct {
	wall, cpu, sync time.Duration
	kib             float64
	ios             uint64
}

// measure runs f between two reads of the device's counters, the second
// after a syncfs of dir's file system, which is synced before too.
func measure(dir, devName string, f func() error) (measured, error) {
	var m measured
	if _, err := syncfs(dir); err != nil {
		return m, err
	}
	before, err := deviceStat(devName)
	if err != nil {
		return m, err
	}
	cpu0 := cpuTime()
	t0 := time.Now()
	if err := f(); err != nil {
		return m, err
	}
	m.wall, m.cpu = time.Since(t0), cpuTime()-cpu0
	if m.sync, err = syncfs(dir); err != nil {
		return m, err
	}
	after, err := deviceStat(devName)
	if err != nil {
		return m, err
	}
	m.kib = float64(after.WriteSectors-before.WriteSectors) * 512 / 1024
	m.ios = after.WriteIOs - before.WriteIOs
	return m, nil
}

func deviceStat(name string) (diskstat.Stat, error) {
	s, err := diskstat.ReadSample()
	if err != nil {
		return diskstat.Stat{}, fmt.Errorf("read disk statistics: %w", err)
	}
	st, ok := s.Find(name)
	if !ok {
		return diskstat.Stat{}, fmt.Errorf("device %s not in /proc/diskstats", name)
	}
	return st, nil
}

// syncfs syncs the file system of dir and returns how long it took.
func syncfs(dir string) (time.Duration, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("open %s for syncfs: %w", dir, err)
	}
	defer unix.Close(fd)
	t0 := time.Now()
	if err := unix.Syncfs(fd); err != nil {
		return 0, fmt.Errorf("syncfs %s: %w", dir, err)
	}
	return time.Since(t0), nil
}

// cpuTime is the user and system time of the process so far.
func cpuTime() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
