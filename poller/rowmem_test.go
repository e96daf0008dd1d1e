package poller

import (
	"bytes"
	"context"
	"log/slog"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/internal/testing/simtest"
	"github.com/spoold/spoold/simulate"
)

// BenchmarkRowHeap measures the live heap a discovered and planned table
// row holds, as a poller keeps it between discoveries: each op discovers
// one simulated device of 48 interfaces (the if-mib profile, vendor
// numbering) as a poller does (its keys admitted, its polls planned), and
// every device stays alive. B/row is runtime.MemStats.HeapAlloc after a
// GC with them alive, minus the same before, over the rows planned
// (-benchtime=1000x: a thousand devices). Each device is discovered once
// before, so that what the simulator builds at a device's first request
// is not counted.
func BenchmarkRowHeap(b *testing.B) {
	for _, mode := range []TableMode{TableBulk, TableGet} {
		b.Run(string(mode), func(b *testing.B) { rowHeap(b, mode) })
	}
}

func rowHeap(b *testing.B, mode TableMode) {
	targets, interfaces := benchTargets(b, b.N)
	opts := DefaultOptions()
	opts.TableMode = mode
	p := &Poller{opts: opts, log: slog.New(slog.DiscardHandler), now: time.Now}
	newDevices := func() []*device {
		devs := make([]*device, len(targets))
		for i, t := range targets {
			devs[i] = newDevice(t, &p.opts)
		}
		return devs
	}
	discover := func(devs []*device) {
		for _, d := range devs {
			if err := p.discoverDevice(context.Background(), d); err != nil {
				b.Fatal(err)
			}
		}
	}
	discover(newDevices())
	devs := newDevices()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	discover(devs)
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	rows := 0
	for _, d := range devs {
		pl := d.plan.Load()
		rows += pl.rowCount()
		if pl.tables[0].bulk != (mode == TableBulk) {
			b.Fatalf("table polled in bulk: %v, want mode %s", pl.tables[0].bulk, mode)
		}
	}
	if rows != b.N*interfaces {
		b.Fatalf("%d rows planned, want %d", rows, b.N*interfaces)
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(rows), "B/row")
	runtime.KeepAlive(devs)
}

// TestRowSize: a poller keeps every polled row of every device between
// discoveries, in one array a table: each 8 bytes more a row is 19 MB at
// 2.4 million interfaces (BenchmarkRowHeap measures all a row holds).
func TestRowSize(t *testing.T) {
	if n := unsafe.Sizeof(Row{}); unsafe.Sizeof(uintptr(0)) == 8 && n > 72 {
		t.Errorf("a row is %d bytes; want at most 72", n)
	}
}

// benchTargets starts a simulator of devices devices (vendor numbering,
// one worker), stopped at the end of the benchmark, and returns their
// targets with the if-mib profile and the interfaces of each device.
func benchTargets(b *testing.B, devices int) ([]*fleet.Target, int) {
	so := simulate.DefaultOptions()
	so.Devices, so.Numbering, so.Workers = devices, simulate.Vendor, 1
	sim := simtest.Serve(b, so)
	var tf bytes.Buffer
	if err := sim.Fleet().WriteTargets(&tf, sim.Addr(), "if-mib", "2s", 1); err != nil {
		b.Fatal(err)
	}
	targets, err := fleet.ParseTargets(&tf, "sim.targets", nil)
	if err != nil {
		b.Fatal(err)
	}
	return targets, so.Interfaces
}
