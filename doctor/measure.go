package doctor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/diskstat"
)

// UpdateCost is what one RRD update cost on a sample file whose pages were
// dropped from the page cache first.
type UpdateCost struct {
	// FileBytes is the size of the sample RRD file (40 data sources, the
	// default archives).
	FileBytes int64 `json:"file_bytes"`
	// ReadBytes is what the update read from storage (read_bytes of
	// /proc/thread-self/io, or /proc/self/io when Scope says "process").
	ReadBytes uint64 `json:"read_bytes"`
	// WriteBytes is what the update dirtied for writing (write_bytes): the
	// file's share of what its fsync writes back.
	WriteBytes uint64 `json:"write_bytes"`
	// PagesDirtied and PagesWritten are the system-wide nr_dirtied and
	// nr_written of /proc/vmstat around the update and its fsync: other
	// processes' writes are counted too.
	PagesDirtied uint64 `json:"pages_dirtied"`
	PagesWritten uint64 `json:"pages_written"`
	// Seconds is the wall time of the update call.
	Seconds float64 `json:"seconds"`
	// Scope is "thread" or "process": which I/O counters were read.
	Scope string `json:"scope"`
}

// sampleDS is the number of data sources of the sample file: a device's
// several dozen counters.
const sampleDS = 40

var pageSize = uint64(os.Getpagesize())

// updateReadLimit is the read per update above which the measurement warns:
// an update needs the header and one row per archive, a few pages.
const updateReadLimit = 128 << 10

// sampleStep is the step of the sample file: the default poll interval.
const sampleStep = 5 * time.Minute

// measureUpdate creates a sample RRD file in a temporary directory under
// dir with the SampleRRD open opens on it, warms it with one update,
// fsyncs it, drops its pages, and measures one more update. The directory
// is removed.
func measureUpdate(open func(string) (SampleRRD, error), dir string) (_ UpdateCost, err error) {
	tmp, err := os.MkdirTemp(dir, ".spoold-doctor-")
	if err != nil {
		return UpdateCost{}, err
	}
	defer func() {
		if rerr := os.RemoveAll(tmp); rerr != nil && err == nil {
			err = rerr
		}
	}()
	r, err := open(tmp)
	if err != nil {
		return UpdateCost{}, err
	}
	defer func() {
		if cerr := r.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	path := filepath.Join(tmp, "sample.rrd")
	step := int64(sampleStep / time.Second)
	start := time.Now().Add(-time.Hour).Unix() / step * step
	if err := r.Create(path, sampleDS, sampleStep, start); err != nil {
		return UpdateCost{}, fmt.Errorf("create sample RRD: %w", err)
	}
	if err := r.Update(path, start+step, sampleValues(1)); err != nil {
		return UpdateCost{}, fmt.Errorf("warm-up update: %w", err)
	}
	size, err := syncAndDrop(path)
	if err != nil {
		return UpdateCost{}, err
	}
	vals := sampleValues(2)
	c, err := measuredUpdate(func() error { return r.Update(path, start+2*step, vals) }, path)
	c.FileBytes = size
	return c, err
}

// sampleValues are the values of the sample file's data sources in the
// v-th update.
func sampleValues(v int) []string {
	vals := make([]string, sampleDS)
	for i := range vals {
		vals[i] = strconv.Itoa(v * (i + 1))
	}
	return vals
}

// openSample opens the sample file at path, in the doctor's own temporary
// directory, for reading, through no symlink.
func openSample(path string) (int, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", path, err)
	}
	return fd, nil
}

// syncAndDrop writes the file at path back, drops its pages from the page
// cache, and returns its size.
func syncAndDrop(path string) (int64, error) {
	fd, err := openSample(path)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, fmt.Errorf("stat %s: %w", path, err)
	}
	if err := unix.Fsync(fd); err != nil {
		return 0, fmt.Errorf("fsync %s: %w", path, err)
	}
	if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil {
		return 0, fmt.Errorf("posix_fadvise DONTNEED %s: %w", path, err)
	}
	return st.Size, nil
}

// fsyncFile fsyncs the file at path.
func fsyncFile(path string) error {
	fd, err := openSample(path)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fsync(fd)
}

// measuredUpdate runs update on this OS thread between two readings of
// its I/O counters, then fsyncs the file at path between readings of
// /proc/vmstat.
func measuredUpdate(update func() error, path string) (UpdateCost, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c := UpdateCost{Scope: "thread"}
	readIO := diskstat.ReadThreadIO
	if _, err := readIO(); err != nil {
		c.Scope, readIO = "process", diskstat.ReadSelfIO
	}
	settleVMStat()
	vm0, err := diskstat.ReadVMStat()
	if err != nil {
		return c, err
	}
	io0, err := readIO()
	if err != nil {
		return c, err
	}
	t0 := time.Now()
	if err := update(); err != nil {
		return c, fmt.Errorf("measured update: %w", err)
	}
	c.Seconds = time.Since(t0).Seconds()
	io1, err := readIO()
	if err != nil {
		return c, err
	}
	if err := fsyncFile(path); err != nil {
		return c, fmt.Errorf("fsync %s: %w", path, err)
	}
	settleVMStat()
	vm1, err := diskstat.ReadVMStat()
	if err != nil {
		return c, err
	}
	d := io1.Sub(io0)
	c.ReadBytes, c.WriteBytes = d.ReadBytes, d.WriteBytes
	c.PagesDirtied = vm1["nr_dirtied"] - vm0["nr_dirtied"]
	c.PagesWritten = vm1["nr_written"] - vm0["nr_written"]
	return c, nil
}

// settleVMStat makes the per-CPU deltas of the vmstat counters visible in
// /proc/vmstat: the kernel folds them in every vm.stat_interval, or at once
// on a write to /proc/sys/vm/stat_refresh (root only). Without the fold a
// few pages of one update would stay uncounted.
func settleVMStat() {
	if os.WriteFile("/proc/sys/vm/stat_refresh", []byte("1\n"), 0) == nil {
		return
	}
	interval := time.Second
	if b, err := os.ReadFile("/proc/sys/vm/stat_interval"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n > 0 {
			interval = time.Duration(n) * time.Second
		}
	}
	time.Sleep(interval + 100*time.Millisecond)
}

func checkUpdate(r *Report, o Options) {
	dirs := []string{o.RRDDir}
	if o.OpenSampleRRD == nil {
		return
	}
	if _, err := os.Stat(o.RRDDir); errors.Is(err, os.ErrNotExist) {
		r.add(Finding{Check: "rrd-update", Severity: OK, Dirs: dirs, Found: "RRD directory does not exist yet: update not measured (spoold creates it)"})
		return
	}
	c, err := measureUpdate(o.OpenSampleRRD, o.RRDDir)
	if err != nil {
		r.add(Finding{Check: "rrd-update", Severity: Warn, Dirs: dirs, Found: fmt.Sprintf("could not measure an RRD update: %v", err),
			Fix: fmt.Sprintf("ls -ld %s   # spoold must be able to create files there", o.RRDDir)})
		return
	}
	r.Update = &c
	f := Finding{Check: "rrd-update", Severity: OK, Dirs: dirs,
		Found: fmt.Sprintf("one update of a cold %s sample file (%d DS, default RRAs) took %.1f ms, read %s from storage and dirtied %d pages for writeback (%s I/O counters); system-wide around it and its fsync: nr_dirtied +%d, nr_written +%d pages (other processes included)",
			bytesIEC(uint64(c.FileBytes)), sampleDS, c.Seconds*1000, bytesIEC(c.ReadBytes), c.WriteBytes/pageSize, c.Scope, c.PagesDirtied, c.PagesWritten),
		Why: "an update needs the header and one row per archive, a few pages; reading much more is read-ahead, and it multiplies by every RRD file each cycle"}
	if c.ReadBytes > updateReadLimit {
		f.Severity = Warn
		f.Found += fmt.Sprintf(", above %s", bytesIEC(updateReadLimit))
		f.Fix = "lower the read-ahead of the RRD directory's disk (see the read-ahead finding)"
	}
	r.add(f)
}
