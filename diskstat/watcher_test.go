package diskstat

import (
	"testing"
	"time"
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

func TestWatcherLive(t *testing.T) {
	w := NewWatcher("no-such-device")
	for range 2 {
		if _, _, err := w.Next(); err != nil {
			t.Skip(err)
		}
	}
}
