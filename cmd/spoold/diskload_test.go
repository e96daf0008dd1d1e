package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoold/spoold/diskstat"
	"github.com/spoold/spoold/internal/testing/testenv"
)

// TestDaemonReportsDiskLoadAndNextRescan runs the daemon on a temp dir
// and reads, from /status and /metrics, the device behind the temp dir
// with iostat figures, spoold's own writes, the spool writes of its poll
// cycles, its RRD updates, and when the loader walks the spool again.
func TestDaemonReportsDiskLoadAndNextRescan(t *testing.T) {
	requireRRDTool(t)
	dir := t.TempDir()
	dev, err := diskstat.DeviceOf(dir)
	if err != nil {
		testenv.Missing(t, "temp dir on no block device: %v", err)
	}
	f := startFleet(t, 3)
	p := startDaemon(t, daemonArgs(dir, f, "--write-delay", "1s", "--write-jitter", "0s",
		"--disk-stats-interval", "500ms", "--rescan-interval", "1h")...)
	st := p.waitFor(t, "2 cycles, an RRD update and two disk samples", func(st map[string]any) bool {
		return num(st, "last_cycle", "seq") >= 2 && num(st, "disk", "rrd_updates", "count") > 0 &&
			num(st, "disk", "interval_seconds") > 0 && num(st, "disk", "process", "write_bytes") > 0
	})
	disk := st["disk"].(map[string]any)
	t.Logf("disk: %v", disk)
	devs := disk["devices"].([]any)
	if len(devs) != 1 {
		t.Fatalf("devices %v, want the one device of %s", devs, dir)
	}
	d := devs[0].(map[string]any)
	dirs := d["dirs"].([]any)
	if d["name"] != dev.Name || d["disk"] != dev.Disk || len(dirs) != 2 || dirs[0] != filepath.Join(dir, "spool") || dirs[1] != filepath.Join(dir, "rrd") {
		t.Errorf("device %v, want %s (disk %s) with the spool and RRD directories", d, dev.Name, dev.Disk)
	}
	for _, k := range []string{"reads_per_second", "writes_per_second", "r_await_ms", "w_await_ms", "util_percent"} {
		v, ok := d[k].(float64)
		if !ok || v < 0 || (k == "util_percent" && v > 100) {
			t.Errorf("device %s = %v", k, d[k])
		}
	}
	if v := num(disk, "interval_seconds"); v < 0.4 || v > 5 {
		t.Errorf("interval_seconds %v for a 500ms sampler", v)
	}
	cycles := disk["poll_cycles"].(map[string]any)
	// Of the 3 devices' entry writes, those that ran while two others
	// were measured (diskstat.MeasureSlots) count as unsampled.
	if last := num(cycles, "last_operations"); num(cycles, "count") < 1 || last < 1 || last > 3 || num(cycles, "total", "write_bytes") <= 0 || num(cycles, "unmeasured_operations") != 0 {
		t.Errorf("poll_cycles %v: want the last cycle's 3 entry writes measured, but those run while two others were", cycles)
	}
	updates := disk["rrd_updates"].(map[string]any)
	if num(updates, "operations") < num(updates, "count") || num(updates, "unmeasured_operations") != 0 {
		t.Errorf("rrd_updates %v: want the first update measured, at least one row each", updates)
	}

	ld := st["loader"].(map[string]any)
	finished, err1 := time.Parse(time.RFC3339Nano, ld["finished"].(string))
	next, err2 := time.Parse(time.RFC3339Nano, ld["next_rescan"].(string))
	if err1 != nil || err2 != nil {
		t.Fatalf("loader finished %v, next_rescan %v: %v %v", ld["finished"], ld["next_rescan"], err1, err2)
	}
	if gap := next.Sub(finished); gap < time.Hour-5*time.Second || gap > time.Hour+5*time.Second {
		t.Errorf("next rescan %v after the walk ended, want the 1h rescan interval", gap)
	}

	series, err := parseMetrics(string(get(t, p.admin+"/metrics")))
	if err != nil {
		t.Fatal(err)
	}
	util, ok := series[`spoold_disk_utilization_ratio{device="`+dev.Name+`"}`]
	if !ok || util < 0 || util > 1 {
		t.Errorf("spoold_disk_utilization_ratio of %s = %v (present %v)", dev.Name, util, ok)
	}
	if v := series["spoold_process_io_written_bytes_total"]; v <= 0 {
		t.Errorf("spoold_process_io_written_bytes_total = %v after spool writes", v)
	}
	if v := series["spoold_loader_next_rescan_time_seconds"]; v != float64(next.UnixNano())/1e9 {
		t.Errorf("spoold_loader_next_rescan_time_seconds = %v, /status says %v", v, next)
	}
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}

// parseMetrics reads `name{labels} value` lines into a map.
func parseMetrics(text string) (map[string]float64, error) {
	m := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			return nil, errors.New("metrics line without a value: " + line)
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics line %q: %w", line, err)
		}
		m[line[:i]] = v
	}
	return m, nil
}
