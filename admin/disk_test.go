package admin

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/diskstat"
)

// sampleDisk is the disk load of the test status: one device behind both
// directories at iostat's worked example (95 %util), and a directory on a
// file system without a block device.
func sampleDisk() DiskStatus {
	return DiskStatus{
		SampledAt: testNow.Add(-3 * time.Second), Interval: 10 * time.Second,
		Devices: []DeviceLoad{
			{Name: "vda1", Disk: "vda", Dirs: []string{"/var/spool/spoold", "/var/lib/spoold/rrd"}, ReadAheadKB: 128,
				Rates: diskstat.Rates{ReadsPerSec: 100, WritesPerSec: 300, ReadKBPerSec: 400, WriteKBPerSec: 2400,
					RAwaitMs: 4, WAwaitMs: 3, UtilPercent: 95}},
			{Dirs: []string{"/run/spoold"}, ReadAheadKB: -1, Error: "no block device"},
		},
		Process: ProcessIO{Total: diskstat.TaskIO{ReadBytes: 1 << 20, WriteBytes: 8 << 20, RChar: 5 << 20, WChar: 9 << 20},
			ReadBytesPerSec: 4096, WriteBytesPerSec: 65536},
		Cycles: IOWork{Units: 42, Ops: 4200, Total: diskstat.BlockIO{WriteBytes: 42 * 409600}, LastOps: 100,
			Last: diskstat.BlockIO{WriteBytes: 409600}, LastAt: testNow.Add(-58 * time.Second)},
		Updates: IOWork{Units: 1234, Ops: 2468, Total: diskstat.BlockIO{ReadBytes: 1234 * 8192, WriteBytes: 1234 * 12288},
			LastOps: 2, Last: diskstat.BlockIO{ReadBytes: 8192, WriteBytes: 12288}, LastAt: testNow.Add(-time.Second)},
	}
}

func TestStatusJSONDisk(t *testing.T) {
	body := readBody(t, do(t, NewHandler(newFakeDaemon(), testOptions()), "GET", "/status", ""))
	var doc struct {
		Disk struct {
			SampledAt string  `json:"sampled_at"`
			Interval  float64 `json:"interval_seconds"`
			Devices   []struct {
				Name, Disk  string
				Dirs        []string
				ReadAheadKB int `json:"read_ahead_kb"`
				diskstat.Rates
				Error string
			}
			Process struct {
				diskstat.TaskIO
				WriteBytesPerSec float64 `json:"write_bytes_per_second"`
			}
			Cycles  ioWorkDocJSON `json:"poll_cycles"`
			Updates ioWorkDocJSON `json:"rrd_updates"`
		}
	}
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("status is not JSON: %v\n%s", err, body)
	}
	d := doc.Disk
	if d.SampledAt != "2026-03-14T11:59:57Z" || d.Interval != 10 || len(d.Devices) != 2 {
		t.Fatalf("disk = %+v", d)
	}
	v := d.Devices[0]
	if v.Name != "vda1" || v.Disk != "vda" || len(v.Dirs) != 2 || v.ReadAheadKB != 128 || v.UtilPercent != 95 ||
		v.ReadsPerSec != 100 || v.WritesPerSec != 300 || v.RAwaitMs != 4 || v.WAwaitMs != 3 || v.Error != "" {
		t.Errorf("device = %+v", v)
	}
	if d.Devices[1].Error != "no block device" || d.Devices[1].Dirs[0] != "/run/spoold" {
		t.Errorf("device without a block device = %+v", d.Devices[1])
	}
	if d.Process.WriteBytes != 8<<20 || d.Process.WriteBytesPerSec != 65536 {
		t.Errorf("process = %+v", d.Process)
	}
	if d.Cycles.Count != 42 || d.Cycles.LastOps != 100 || d.Cycles.Last.WriteBytes != 409600 || d.Cycles.LastAt != "2026-03-14T11:59:02Z" {
		t.Errorf("poll_cycles = %+v", d.Cycles)
	}
	if d.Updates.Count != 1234 || d.Updates.Total.ReadBytes != 1234*8192 {
		t.Errorf("rrd_updates = %+v", d.Updates)
	}
}

type ioWorkDocJSON struct {
	Count   uint64          `json:"count"`
	LastOps uint64          `json:"last_operations"`
	Total   diskstat.TaskIO `json:"total"`
	Last    diskstat.TaskIO `json:"last"`
	LastAt  string          `json:"last_at"`
}

func TestMetricsDisk(t *testing.T) {
	series, types, err := parseExposition(readBody(t, do(t, NewHandler(newFakeDaemon(), testOptions()), "GET", "/metrics", "")))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		`spoold_disk_info{device="vda1",dir="/var/spool/spoold",disk="vda"}`:   1,
		`spoold_disk_info{device="vda1",dir="/var/lib/spoold/rrd",disk="vda"}`: 1,
		`spoold_disk_sample_interval_seconds`:                                  10,
		`spoold_disk_reads_per_second{device="vda1"}`:                          100,
		`spoold_disk_writes_per_second{device="vda1"}`:                         300,
		`spoold_disk_read_bytes_per_second{device="vda1"}`:                     400 * 1024,
		`spoold_disk_written_bytes_per_second{device="vda1"}`:                  2400 * 1024,
		`spoold_disk_read_await_seconds{device="vda1"}`:                        0.004,
		`spoold_disk_write_await_seconds{device="vda1"}`:                       0.003,
		`spoold_disk_utilization_ratio{device="vda1"}`:                         0.95,
		`spoold_disk_read_ahead_bytes{disk="vda"}`:                             128 * 1024,
		`spoold_process_io_written_bytes_total`:                                8 << 20,
		`spoold_process_io_read_bytes_total`:                                   1 << 20,
		`spoold_poller_cycle_io_units_total`:                                   42,
		`spoold_poller_cycle_io_operations_total`:                              4200,
		`spoold_poller_cycle_io_last_written_bytes`:                            409600,
		`spoold_writer_update_io_units_total`:                                  1234,
		`spoold_writer_update_io_read_bytes_total`:                             1234 * 8192,
		`spoold_writer_update_io_last_written_bytes`:                           12288,
	}
	for k, v := range want {
		if s, ok := series[k]; !ok {
			t.Errorf("series %s missing", k)
		} else if math.Abs(s.value-v) > 1e-9 {
			t.Errorf("%s = %v, want %v", k, s.value, v)
		}
	}
	if types["spoold_disk_utilization_ratio"] != "gauge" || types["spoold_process_io_written_bytes_total"] != "counter" {
		t.Errorf("types: %v", types)
	}
	for k := range series {
		if strings.HasPrefix(k, "spoold_disk_reads_per_second") && k != `spoold_disk_reads_per_second{device="vda1"}` {
			t.Errorf("rates reported for a directory without a block device: %s", k)
		}
	}
}

func TestPageDiskCard(t *testing.T) {
	body := readBody(t, do(t, NewHandler(newFakeDaemon(), testOptions()), "GET", "/", ""))
	i := strings.Index(body, `id="disk"`)
	if i < 0 {
		t.Fatal("page has no disk card")
	}
	card := body[i:]
	card = card[:strings.Index(card, "</section>")]
	for _, want := range []string{
		"over 10s, 3s ago",
		"95.0% <small>util · vda1",
		"/var/spool/spoold, /var/lib/spoold/rrd",
		"100 r/s · 400.0 KiB/s", "300 w/s · 2.3 MiB/s", "r 4.0 ms · w 3.0 ms",
		"128 KiB read-ahead",
		"no block device",
		"read 4.0 KiB/s · wrote 64.0 KiB/s; since start read 1.0 MiB · wrote 8.0 MiB",
		"last: 100 entries · read 0 B · wrote 400.0 KiB; 42 cycles",
		"mean read 8.0 KiB · wrote 12.0 KiB per update (1234 updates)",
		`class="fill bad" style="width: 95.0%"`,
	} {
		if !strings.Contains(card, want) {
			t.Errorf("disk card lacks %q:\n%s", want, card)
		}
	}
}

func TestPageDiskCardBeforeSamples(t *testing.T) {
	fb := newFakeDaemon()
	fb.status.Disk = DiskStatus{}
	body := readBody(t, do(t, NewHandler(fb, testOptions()), "GET", "/", ""))
	if !strings.Contains(body, "no sample yet") || strings.Count(body, "none yet") != 2 {
		t.Errorf("disk card before the first samples does not say so")
	}
}
