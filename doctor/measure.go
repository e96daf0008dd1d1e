package doctor

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/diskstat"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdwriter"
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

func sampleProfile() rrd.Layout {
	step := 5 * time.Minute
	p := rrd.Layout{Step: step, RRAs: rrd.DefaultRRAs(step)}
	for i := range sampleDS {
		p.DS = append(p.DS, rrd.DataSource{Name: fmt.Sprintf("ds%02d", i), Type: rrd.Gauge,
			Heartbeat: 2 * step, Min: 0, Max: math.NaN()})
	}
	return p
}

// measureUpdate creates a sample RRD file in a temporary directory under
// dir with the RRD mk makes on that directory's root, warms it with one
// update, fsyncs it, drops its pages, and measures one more update. The
// directory is removed.
func measureUpdate(mk func(*rrd.Root) rrdwriter.RRD, dir string) (_ UpdateCost, err error) {
	tmp, err := os.MkdirTemp(dir, ".spoold-doctor-")
	if err != nil {
		return UpdateCost{}, err
	}
	defer func() {
		if rerr := os.RemoveAll(tmp); rerr != nil && err == nil {
			err = rerr
		}
	}()
	root, err := rrd.OpenRoot(tmp)
	if err != nil {
		return UpdateCost{}, err
	}
	defer root.Close()
	r := mk(root)
	p := sampleProfile()
	path := filepath.Join(tmp, "sample.rrd")
	start := time.Now().Add(-time.Hour).Unix() / 300 * 300
	if err := r.Create(path, p, start); err != nil {
		return UpdateCost{}, fmt.Errorf("create sample RRD: %w", err)
	}
	tmpl := p.DSNames()
	if err := r.Update(path, tmpl, []rrd.Row{sampleRow(start+300, 1)}); err != nil {
		return UpdateCost{}, fmt.Errorf("warm-up update: %w", err)
	}
	size, err := syncAndDrop(root, path)
	if err != nil {
		return UpdateCost{}, err
	}
	c, err := measuredUpdate(r, root, path, tmpl, sampleRow(start+600, 2))
	c.FileBytes = size
	return c, err
}

func sampleRow(t int64, v int) rrd.Row {
	r := rrd.Row{Time: t, Values: make([]string, sampleDS)}
	for i := range r.Values {
		r.Values[i] = strconv.Itoa(v * (i + 1))
	}
	return r
}

// syncAndDrop writes the file at path beneath root back, drops its pages
// from the page cache, and returns its size.
func syncAndDrop(root *rrd.Root, path string) (int64, error) {
	fd, err := root.Open(path, unix.O_RDONLY)
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

// fsyncFile fsyncs the file at path beneath root.
func fsyncFile(root *rrd.Root, path string) error {
	fd, err := root.Open(path, unix.O_RDONLY)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fsync(fd)
}

// measuredUpdate runs one update on this OS thread between two readings of
// its I/O counters, then fsyncs the file between readings of /proc/vmstat.
func measuredUpdate(r rrdwriter.RRD, root *rrd.Root, path string, tmpl []string, row rrd.Row) (UpdateCost, error) {
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
	if err := r.Update(path, tmpl, []rrd.Row{row}); err != nil {
		return c, fmt.Errorf("measured update: %w", err)
	}
	c.Seconds = time.Since(t0).Seconds()
	io1, err := readIO()
	if err != nil {
		return c, err
	}
	if err := fsyncFile(root, path); err != nil {
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
	if o.RRD == nil {
		return
	}
	if _, err := os.Stat(o.RRDDir); errors.Is(err, os.ErrNotExist) {
		r.add(Finding{Check: "rrd-update", Severity: OK, Dirs: dirs, Found: "RRD directory does not exist yet: update not measured (spoold creates it)"})
		return
	}
	c, err := measureUpdate(o.RRD, o.RRDDir)
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
