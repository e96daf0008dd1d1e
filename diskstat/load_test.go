package diskstat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/testenv"
	"golang.org/x/sys/unix"
)

// TestLoadResolve puts two directories of one file system on one
// device entry and reports a directory on a file system without a block
// device (procfs) with the reason.
func TestLoadResolve(t *testing.T) {
	base := t.TempDir()
	dev, err := DeviceOf(base)
	if errors.Is(err, ErrNoBlockDevice) {
		testenv.Missing(t, "temp dir on no block device: %v", err)
	}
	a, b := filepath.Join(base, "spool"), filepath.Join(base, "rrd")
	os.Mkdir(a, 0o755)
	os.Mkdir(b, 0o755)
	l := NewLoad(time.Second)
	l.Resolve(a, b, "/proc")
	st := l.Status()
	if len(st.Devices) != 2 {
		t.Fatalf("devices %+v, want one for both temp dirs and one for /proc", st.Devices)
	}
	if d := st.Devices[0]; d.Name != dev.Name || len(d.Dirs) != 2 || d.Dirs[0] != a || d.Dirs[1] != b || d.Error != "" {
		t.Errorf("device of the temp dirs = %+v, want %s with both", d, dev.Name)
	}
	if d := st.Devices[1]; d.Name != "" || d.Dirs[0] != "/proc" || !strings.Contains(d.Error, "no block device") {
		t.Errorf("procfs = %+v", d)
	}
}

// TestTallyCycles measures two entry writes of one unit and closes it:
// the unit holds exactly what the thread's counters moved during the two
// writes, which is at least the two pages they dirtied (the kernel may
// charge a block of the file system's own beside them, so never an exact
// page count); the next unit starts empty and the total keeps the first.
func TestTallyCycles(t *testing.T) {
	dir := t.TempDir()
	if _, err := DeviceOf(dir); err != nil {
		testenv.Missing(t, "no block device under %s: %v", dir, err)
	}
	var tally Tally
	var moved uint64 // the thread's counters around each write, read inside fn
	for i, n := range []int{1000, 3000} {
		tally.Measure(1, func() error {
			before := threadWritten(t)
			err := os.WriteFile(filepath.Join(dir, string(rune('a'+i))), make([]byte, n), 0o644)
			moved += threadWritten(t) - before
			return err
		})
	}
	at := time.Unix(1700000000, 0)
	tally.CloseUnit(at)
	w := tally.Get()
	if w.Unmeasured == 2 {
		testenv.Missing(t, "no thread I/O counters")
	}
	if w.Units != 1 || w.Ops != 2 || w.LastOps != 2 || !w.LastAt.Equal(at) || w.Last.WriteBytes != moved || w.Total != w.Last {
		t.Errorf("after one cycle of 2 writes (the thread's counters moved %d bytes): %+v", moved, w)
	}
	if pages := uint64(2 * os.Getpagesize()); w.Last.WriteBytes < pages {
		t.Errorf("one cycle of 2 writes to new files counts %d bytes written, less than their %d bytes of dirtied pages", w.Last.WriteBytes, pages)
	}
	tally.CloseUnit(at.Add(time.Second))
	if w2 := tally.Get(); w2.Units != 2 || w2.LastOps != 0 || w2.Last.WriteBytes != 0 || w2.Total != w.Total {
		t.Errorf("an empty second cycle: %+v", w2)
	}
}

// threadWritten is what the calling thread wrote to storage so far, as
// OnThread counts it (getrusage's blocks written).
func threadWritten(t *testing.T) uint64 {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		t.Fatal(err)
	}
	return uint64(ru.Oublock) * 512
}

// TestTallySamples measures one unit in Every: the RRD updates (a unit
// each) and the poll cycles (Measure's operations until CloseUnit) of the
// other units run, count as unsampled and are in no figure; the last unit
// is the last one measured; every operation is counted once.
func TestTallySamples(t *testing.T) {
	updates := Tally{Every: 4}
	calls := 0
	for range 9 {
		updates.MeasureUnit(2, func() error { calls++; return nil })
	}
	if w := updates.Get(); calls != 9 || w.Units != 3 || w.Ops != 6 || w.LastOps != 2 || w.Unsampled != 12 || w.Unmeasured != 0 {
		t.Errorf("9 updates of 2 rows, one in 4 measured: %d calls, %+v", calls, w)
	}

	// Updates that count their rows as they run (MeasureUnitOf); one
	// of none is no unit, and the next one is measured in its place
	// (the 1-row update; then the 2 and 4 as sampled).
	counted, ran := Tally{Every: 2}, 0
	for _, rows := range []uint64{0, 1, 2, 3, 4} {
		counted.MeasureUnitOf(func() (uint64, error) { ran++; return rows, nil })
	}
	if w := counted.Get(); ran != 5 || w.Units != 3 || w.Ops != 1+2+4 || w.LastOps != 4 || w.Unsampled != 3 {
		t.Errorf("updates of 0, 1, 2, 3 and 4 rows counted as they ran, one in 2 measured: %d calls, %+v", ran, w)
	}

	cycles := Tally{Every: 2}
	at := time.Unix(1700000000, 0)
	for i, ops := range []int{2, 3, 1, 5} {
		for range ops {
			cycles.Measure(1, func() error { calls++; return nil })
		}
		cycles.CloseUnit(at.Add(time.Duration(i) * time.Second))
	}
	if w := cycles.Get(); calls != 9+11 || w.Units != 2 || w.Ops != 3 || w.LastOps != 1 || !w.LastAt.Equal(at.Add(2*time.Second)) || w.Unsampled != 8 {
		t.Errorf("cycles of 2, 3, 1 and 5 writes, one in 2 measured: %+v", w)
	}
	if l := NewLoad(time.Second); l.Cycles.Every != CycleSampling || l.Updates.Every != UpdateSampling {
		t.Errorf("a Load samples cycles 1 in %d and updates 1 in %d", l.Cycles.Every, l.Updates.Every)
	}
}

// TestTallyBoundsMeasuring: of the operations of a measured cycle that run
// at once, Slots are measured (each holds its thread while it waits) and
// the rest run as they are, counted as unsampled; a whole unit that finds
// no slot passes its measuring to the next.
func TestTallyBoundsMeasuring(t *testing.T) {
	const n = 10
	concurrently := func(op func(fn func() error)) {
		var entered, done sync.WaitGroup
		release := make(chan struct{})
		entered.Add(n)
		done.Add(n)
		for range n {
			go func() {
				defer done.Done()
				op(func() error { entered.Done(); <-release; return nil })
			}()
		}
		entered.Wait()
		close(release)
		done.Wait()
	}
	cycles := Tally{Every: 1, Slots: 2}
	concurrently(func(fn func() error) { cycles.Measure(3, fn) })
	cycles.CloseUnit(time.Unix(1700000000, 0))
	if w := cycles.Get(); w.Units != 1 || w.LastOps != 2*3 || w.Unsampled != (n-2)*3 {
		t.Errorf("%d writes of 3 entries at once, 2 measured at most: %+v", n, w)
	}
	if cycles.measuring.Load() != 0 {
		t.Errorf("%d measurements still hold a slot", cycles.measuring.Load())
	}

	updates := Tally{Every: 4, Slots: 1}
	concurrently(func(fn func() error) { updates.MeasureUnit(1, fn) })
	if w := updates.Get(); w.Units != 1 || w.Unsampled != n-1 {
		t.Errorf("%d updates at once, 1 in 4 measured, 1 at a time: %+v", n, w)
	}
	updates.MeasureUnit(1, func() error { return nil }) // owed: measured, though not the 4th
	if w := updates.Get(); w.Units != 2 {
		t.Errorf("the update after the ones that found no slot was not measured: %+v", w)
	}
	if l := NewLoad(time.Second); l.Cycles.Slots != MeasureSlots || l.Updates.Slots != MeasureSlots {
		t.Errorf("a Load measures %d cycle writes and %d updates at once, want %d", l.Cycles.Slots, l.Updates.Slots, MeasureSlots)
	}
}
