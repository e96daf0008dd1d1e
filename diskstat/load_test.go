package diskstat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/testenv"
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
// the unit holds the pages both writes dirtied (one each), the next unit
// starts empty.
func TestTallyCycles(t *testing.T) {
	dir := t.TempDir()
	if _, err := DeviceOf(dir); err != nil {
		testenv.Missing(t, "no block device under %s: %v", dir, err)
	}
	pages := uint64(2 * os.Getpagesize())
	var tally Tally
	for i, n := range []int{1000, 3000} {
		tally.Measure(1, func() error { return os.WriteFile(filepath.Join(dir, string(rune('a'+i))), make([]byte, n), 0o644) })
	}
	at := time.Unix(1700000000, 0)
	tally.CloseUnit(at)
	w := tally.Get()
	if w.Unmeasured == 2 {
		testenv.Missing(t, "no thread I/O counters")
	}
	if w.Units != 1 || w.Ops != 2 || w.LastOps != 2 || !w.LastAt.Equal(at) || w.Last.WriteBytes != pages || w.Total != w.Last {
		t.Errorf("after one cycle of 2 writes (two new pages): %+v", w)
	}
	tally.CloseUnit(at.Add(time.Second))
	if w := tally.Get(); w.Units != 2 || w.LastOps != 0 || w.Last.WriteBytes != 0 || w.Total.WriteBytes != pages {
		t.Errorf("an empty second cycle: %+v", w)
	}
}
