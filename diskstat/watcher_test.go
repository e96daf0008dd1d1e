package diskstat

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/testenv"
)

func TestWatcher(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	samples := []Sample{
		{Time: t0, Stats: []Stat{{Name: "vda", ReadIOs: 1000, ReadTicks: 5000, IOTicks: 10000}, {Name: "vdb"}}},
		{Time: t0.Add(2 * time.Second), Stats: []Stat{{Name: "vda", ReadIOs: 1200, ReadTicks: 5800, IOTicks: 11900}}},
	}
	w := NewWatcher("vda", "vdb")
	w.read = func() (Sample, error) {
		s := samples[0]
		samples = samples[1:]
		return s, nil
	}
	if r, _, err := w.Next(); err != nil || r != nil {
		t.Fatalf("first Next = %v, %v; want nil baseline", r, err)
	}
	r, dt, err := w.Next()
	if err != nil || dt != 2*time.Second {
		t.Fatalf("second Next: %v, dt %v", err, dt)
	}
	if got := r["vda"]; got.ReadsPerSec != 100 || got.RAwaitMs != 4 || got.UtilPercent != 95 {
		t.Errorf("vda rates %+v", got)
	}
	if _, ok := r["vdb"]; ok {
		t.Error("vdb vanished from the second sample but has rates")
	}
}

// TestWatcherLive watches the real block device of the temp dir while
// the test writes and syncs a file there: the second sample has that
// device's rates, sane (non-negative, %util at most 100) and showing
// writes; an unknown device is left out.
func TestWatcherLive(t *testing.T) {
	dir := t.TempDir()
	dev, err := DeviceOf(dir)
	if err != nil {
		testenv.Missing(t, "temp dir not on a block device: %v", err)
	}
	w := NewWatcher(dev.Name, "no-such-device")
	if r, _, err := w.Next(); err != nil || r != nil {
		t.Fatalf("first Next = %v, %v; want no rates (a baseline)", r, err)
	}
	f, err := os.Create(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r, dt, err := w.Next()
	if err != nil || dt <= 0 {
		t.Fatalf("second Next: %v, dt %v", err, dt)
	}
	got, ok := r[dev.Name]
	if !ok {
		t.Fatalf("no rates for %s in %v", dev.Name, r)
	}
	if _, ok := r["no-such-device"]; ok {
		t.Error("rates for a device that does not exist")
	}
	if got.WritesPerSec <= 0 || got.WriteKBPerSec <= 0 || got.UtilPercent < 0 || got.UtilPercent > 100 ||
		got.ReadsPerSec < 0 || got.RAwaitMs < 0 || got.WAwaitMs < 0 {
		t.Errorf("rates of %s after a synced 1 MiB write: %+v", dev.Name, got)
	}
}
