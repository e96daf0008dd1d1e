package diskstat

import "time"

// Watcher computes the iostat rates of some devices between successive
// calls of Next: the reusable half of an always-on disk-load report. It is
// not safe for concurrent use; a caller that samples from a ticker keeps it
// on that goroutine.
type Watcher struct {
	devices []string
	prev    Sample
	read    func() (Sample, error)
}

// NewWatcher watches the named devices (names as in /proc/diskstats, e.g.
// Device.Name) through ReadSample.
func NewWatcher(devices ...string) *Watcher {
	return &Watcher{devices: devices, read: ReadSample}
}

// Next samples the counters and returns each watched device's rates since
// the previous call, and the interval they cover. The first call only
// records a baseline and returns nil; a device missing from either sample is
// left out.
func (w *Watcher) Next() (map[string]Rates, time.Duration, error) {
	cur, err := w.read()
	if err != nil {
		return nil, 0, err
	}
	prev := w.prev
	w.prev = cur
	if prev.Time.IsZero() {
		return nil, 0, nil
	}
	dt := cur.Time.Sub(prev.Time)
	out := make(map[string]Rates, len(w.devices))
	for _, name := range w.devices {
		a, ok1 := prev.Find(name)
		b, ok2 := cur.Find(name)
		if ok1 && ok2 {
			out[name] = Compute(a, b, dt)
		}
	}
	return out, dt, nil
}
