package diskstat

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoold/spoold/internal/pagecache"
	"github.com/spoold/spoold/internal/testing/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const diskstatsFixture = `   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 254       0 vda 146393 1200 9463726 78211 2211690 1044063 54432056 3346633 0 1393520 3431690 0 0 0 0 70321 6845
 254       1 vda1 146000 1100 9400000 78000 2211000 1044000 54400000 3346000 2 1393000 3430000
`

// procDir returns a fake proc file system with the named files.
func procDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestParseDiskstats(t *testing.T) {
	s, err := readSample(procDir(t, map[string]string{"diskstats": diskstatsFixture}))
	if err != nil {
		t.Fatal(err)
	}
	st := s.Stats
	if len(st) != 3 {
		t.Fatalf("got %d devices, want 3", len(st))
	}
	want := Stat{Major: 254, Minor: 0, Name: "vda", ReadIOs: 146393, ReadMerges: 1200, ReadSectors: 9463726,
		ReadTicks: 78211, WriteIOs: 2211690, WriteMerges: 1044063, WriteSectors: 54432056, WriteTicks: 3346633,
		InFlight: 0, IOTicks: 1393520, TimeInQueue: 3431690}
	if st[1] != want {
		t.Errorf("vda = %+v\nwant %+v", st[1], want)
	}
	if st[2].Name != "vda1" || st[2].InFlight != 2 || st[2].TimeInQueue != 3430000 {
		t.Errorf("vda1 (14-field line) = %+v", st[2])
	}
}

// TestParseDiskstatsErrors: a field that is not a number is an error. A
// line of fewer than 14 fields, an error of spoold's own parser, is
// skipped by procfs's: the device is not in the sample.
func TestParseDiskstatsErrors(t *testing.T) {
	for _, in := range []string{
		"254 0 vda 1 2 3 4 5 6 7 x 9 10 11",
		"-1 0 vda 1 2 3 4 5 6 7 8 9 10 11",
	} {
		t.Run(in, func(t *testing.T) {
			if _, err := readSample(procDir(t, map[string]string{"diskstats": in})); err == nil {
				t.Errorf("no error for %q", in)
			}
		})
	}
	s, err := readSample(procDir(t, map[string]string{"diskstats": "254 0 vda 1 2 3\n8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n"}))
	if _, found := s.Find("vda"); err != nil || found || len(s.Stats) != 1 {
		t.Errorf("a short line: %+v, %v; want it skipped", s.Stats, err)
	}
}

// TestComputeWorkedExample checks the iostat -x arithmetic on figures worked
// out by hand: over 2 s, 200 reads that took 800 ms in all (r_await 4 ms),
// 600 writes that took 1,800 ms (w_await 3 ms), 1,600 sectors read (800 KiB,
// 400 kB/s), 9,600 written (2,400 kB/s), and the device busy 1,900 ms of
// 2,000 (95 %util).
func TestComputeWorkedExample(t *testing.T) {
	prev := Stat{ReadIOs: 1000, ReadTicks: 5000, ReadSectors: 8000, WriteIOs: 2000, WriteTicks: 30000, WriteSectors: 32000, IOTicks: 10000}
	cur := Stat{ReadIOs: 1200, ReadTicks: 5800, ReadSectors: 9600, WriteIOs: 2600, WriteTicks: 31800, WriteSectors: 41600, IOTicks: 11900}
	got := Compute(prev, cur, 2*time.Second)
	want := Rates{ReadsPerSec: 100, WritesPerSec: 300, ReadKBPerSec: 400, WriteKBPerSec: 2400, RAwaitMs: 4, WAwaitMs: 3, UtilPercent: 95}
	if !ratesNear(got, want) {
		t.Errorf("Compute = %+v\nwant %+v", got, want)
	}
}

func TestComputeEdges(t *testing.T) {
	idle := Stat{ReadIOs: 5, IOTicks: 100}
	if r := Compute(idle, idle, time.Second); r != (Rates{}) {
		t.Errorf("idle device: %+v, want zero (no division by zero await)", r)
	}
	if r := Compute(idle, Stat{IOTicks: 5000}, time.Second); r.UtilPercent != 100 || r.ReadsPerSec != 0 {
		t.Errorf("counter reset / overfull interval: %+v", r)
	}
	if r := Compute(Stat{}, Stat{ReadIOs: 3}, 0); r != (Rates{}) {
		t.Errorf("zero interval: %+v", r)
	}
}

func ratesNear(a, b Rates) bool {
	av := []float64{a.ReadsPerSec, a.WritesPerSec, a.ReadKBPerSec, a.WriteKBPerSec, a.RAwaitMs, a.WAwaitMs, a.UtilPercent}
	bv := []float64{b.ReadsPerSec, b.WritesPerSec, b.ReadKBPerSec, b.WriteKBPerSec, b.RAwaitMs, b.WAwaitMs, b.UtilPercent}
	for i := range av {
		if math.Abs(av[i]-bv[i]) > 1e-9 {
			return false
		}
	}
	return true
}

func TestParseTaskIO(t *testing.T) {
	tests := []struct {
		name, in string
		want     TaskIO
		err      bool
	}{
		{"full", "rchar: 6976\nwchar: 12\nsyscr: 10\nsyscw: 1\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n",
			TaskIO{RChar: 6976, WChar: 12, SyscR: 10, SyscW: 1, ReadBytes: 4096, WriteBytes: 8192}, false},
		{"unknown key ignored", "read_bytes: 7\nfuture_key: 3\n", TaskIO{ReadBytes: 7}, false},
		{"no colon", "read_bytes 7\n", TaskIO{}, true},
		{"not a number", "read_bytes: x\n", TaskIO{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTaskIO(strings.NewReader(tc.in))
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if !tc.err && got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestReadProcIO(t *testing.T) {
	dir := procDir(t, map[string]string{"4242/io": "rchar: 6976\nwchar: 12\nsyscr: 10\nsyscw: 1\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 512\n"})
	if err := os.Symlink("4242", filepath.Join(dir, "self")); err != nil {
		t.Fatal(err)
	}
	got, err := readProcIO(dir)
	want := TaskIO{RChar: 6976, WChar: 12, SyscR: 10, SyscW: 1, ReadBytes: 4096, WriteBytes: 8192, CancelledWriteBytes: 512}
	if err != nil || got != want {
		t.Errorf("readProcIO = %+v, %v; want %+v", got, err, want)
	}
	if _, err := readProcIO(t.TempDir()); err == nil {
		t.Error("no error without self/io")
	}
}

func TestTaskIOSub(t *testing.T) {
	a := TaskIO{ReadBytes: 10, WriteBytes: 20, RChar: 5}
	b := TaskIO{ReadBytes: 4106, WriteBytes: 20, RChar: 105}
	if d := b.Sub(a); d != (TaskIO{ReadBytes: 4096, RChar: 100}) {
		t.Errorf("Sub = %+v", d)
	}
}

func TestParseVMStat(t *testing.T) {
	m, err := ParseVMStat(strings.NewReader("nr_free_pages 123\nnr_dirtied 7560734\nnr_written 6429904\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m["nr_dirtied"] != 7560734 || m["nr_written"] != 6429904 || len(m) != 3 {
		t.Errorf("got %v", m)
	}
	if _, err := ParseVMStat(strings.NewReader("nr_dirtied\n")); err == nil {
		t.Error("no error for a line without a value")
	}
}

func TestReadLive(t *testing.T) {
	if _, err := os.Stat("/proc/diskstats"); err != nil {
		testenv.Missing(t, "no /proc/diskstats")
	}
	if _, err := ReadSample(); err != nil {
		t.Error(err)
	}
	if _, err := ReadSelfIO(); err != nil {
		t.Error(err)
	}
	if m, err := ReadVMStat(); err != nil || len(m) == 0 {
		t.Errorf("vmstat: %v, %d keys", err, len(m))
	}
}

func TestDeviceOf(t *testing.T) {
	d, err := DeviceOf(t.TempDir())
	if errors.Is(err, ErrNoBlockDevice) {
		testenv.Missing(t, "temp dir not on a block device: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if d.Name == "" || d.Disk == "" {
		t.Errorf("device %+v has no name", d)
	}
	s, err := ReadSample()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Find(d.Name); !ok {
		t.Errorf("device %s not in /proc/diskstats", d.Name)
	}
}

// TestDeviceOfPartition builds a fake sysfs where 8:1 is partition sda1 of
// disk sda, and checks that the read-ahead comes from the disk's queue.
func TestDeviceOfPartition(t *testing.T) {
	sys := t.TempDir()
	dir := t.TempDir()
	d0, err := deviceOf(sys, dir)
	if !errors.Is(err, ErrNoBlockDevice) {
		t.Fatalf("empty sysfs: %v, want ErrNoBlockDevice", err)
	}
	mkdir := func(p string) {
		if err := os.MkdirAll(sys+"/"+p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(sys+"/"+p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mkdir("devices/sda/sda1")
	write("devices/sda/sda1/partition", "1\n")
	mkdir("devices/sda/queue")
	write("devices/sda/queue/read_ahead_kb", "4096\n")
	mkdir("dev/block")
	mkdir("block")
	link := func(target, name string) {
		if err := os.Symlink(target, sys+"/"+name); err != nil {
			t.Fatal(err)
		}
	}
	link("../../devices/sda/sda1", "dev/block/"+devNum(d0))
	link("../devices/sda", "block/sda")
	d, err := deviceOf(sys, dir)
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "sda1" || d.Disk != "sda" || d.ReadAheadKB != 4096 || d.DiskPath() != "/dev/sda" {
		t.Errorf("got %+v", d)
	}
}

func devNum(d Device) string { return fmt.Sprintf("%d:%d", d.Major, d.Minor) }

// TestOnThread writes 64 KiB in fn and reads a file dropped from the page
// cache: on a block device the thread's counters must show the dirtied
// pages and the bytes read from the disk, what /proc/thread-self/io shows
// for the same thread, while a write by another goroutine meanwhile is not
// counted beyond what fn wrote; fn's error comes back.
func TestOnThread(t *testing.T) {
	dir := t.TempDir()
	if _, err := DeviceOf(dir); err != nil {
		testenv.Missing(t, "no block device under %s: %v", dir, err)
	}
	const n = 64 << 10
	cold := dir + "/cold"
	if err := os.WriteFile(cold, make([]byte, n), 0o644); err != nil {
		t.Fatal(err)
	}
	dropCache(t, cold)
	other := make(chan error)
	go func() { other <- os.WriteFile(dir+"/other", make([]byte, 4*n), 0o644) }()
	want := errors.New("fn's error")
	var proc TaskIO
	d, ok, err := OnThread(func() error {
		before, perr := ReadThreadIO()
		if perr != nil {
			t.Fatal(perr)
		}
		if err := os.WriteFile(dir+"/a", make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := os.ReadFile(cold); err != nil {
			t.Fatal(err)
		}
		after, perr := ReadThreadIO()
		if perr != nil {
			t.Fatal(perr)
		}
		proc = after.Sub(before)
		return want
	})
	if e := <-other; e != nil {
		t.Fatal(e)
	}
	if !ok || err != want {
		t.Fatalf("ok %v, err %v", ok, err)
	}
	if d.WriteBytes < n || d.WriteBytes > 2*n {
		t.Errorf("write_bytes %d for %d bytes written on a block device", d.WriteBytes, n)
	}
	if d.ReadBytes < n || d.ReadBytes != proc.ReadBytes {
		t.Errorf("read_bytes %d for a %d-byte file read cold; /proc/thread-self/io says %d", d.ReadBytes, n, proc.ReadBytes)
	}
	if d.WriteBytes != proc.WriteBytes-proc.CancelledWriteBytes {
		t.Errorf("write_bytes %d; /proc/thread-self/io says %d less %d cancelled", d.WriteBytes, proc.WriteBytes, proc.CancelledWriteBytes)
	}
}

// dropCache writes path back and drops its pages from the page cache,
// until none is left.
func dropCache(t *testing.T, path string) {
	if err := pagecache.DropAll(path, 1000); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkOnThread(b *testing.B) {
	for b.Loop() {
		OnThread(func() error { return nil })
	}
}
