// Command writerbench measures RRD write throughput for bench/writer.sh:
// spoold's writer (spool entries on disk → RRD files, entries removed),
// rrdcached (BATCH of UPDATEs, then FLUSHALL until STATS show every value
// written), one rrdtool process per file, and the native update path's
// own cost (native.go). It prints values per second,
// (spoold, rrdcached) pages written back to disk per file updated,
// (spoold) 4 KiB pages read in from disk per second of the timed part, and
// (spoold, rrdcached) µs of CPU per file updated.
// It starts no goroutines beyond the writer's.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spoold/spoold/diskstat"
	"github.com/spoold/spoold/internal/pagecache"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

const start = int64(1_700_000_100)

// offset moves the timed round's values after the -warm round's.
var offset int64

var (
	mode    = flag.String("mode", "", "create | spoold | rrdcached | cli | native")
	dir     = flag.String("dir", "", "RRD directory")
	spoolD  = flag.String("spool", "", "spool directory (spoold)")
	files   = flag.Int("files", 10000, "RRD files")
	nds     = flag.Int("ds", 40, "data sources per file")
	nvals   = flag.Int("values", 12, "pending values per file")
	sock    = flag.String("sock", "", "rrdcached unix socket")
	writers = flag.Int("writers", 4, "spoold --writers")
	cpuProf = flag.String("cpuprofile", "", "write a CPU profile of the timed part (spoold)")
	memProf = flag.String("memprofile", "", "write an allocation profile after the timed part (spoold)")
	peerPid = flag.Int("pid", 0, "rrdcached: the server's pid, to report its CPU time")
	noPre   = flag.Bool("no-prefetch", false, "spoold: do not prefetch the pages an update touches")
	segMem  = flag.Int64("segment-memory", spool.DefaultOptions().MemoryBytes, "spoold: bytes of appended segments kept in memory for the writer (--segment-memory)")
	cold    = flag.Bool("cold", false, "drop the RRD files from the page cache (after a sync) just before the timed part")
	warm    = flag.Bool("warm", false, "spoold, rrdcached: each file written once, untimed, before the timed round (a running writer knows its files)")
	perPoll = flag.Bool("file-per-poll", false, "spoold: spool one file per poll (Write), as before segments, instead of one segment per file (Append)")
)

func main() {
	flag.Parse()
	// As spoold with --gomaxprocs 0 and --writers -writers: a P for each
	// writer beside the CPUs (rrdwriter.Options.Procs).
	if os.Getenv("GOMAXPROCS") == "" {
		o := rrdwriter.DefaultOptions()
		o.Writers = *writers
		runtime.GOMAXPROCS(o.Procs(runtime.GOMAXPROCS(0)))
	}
	var err error
	switch *mode {
	case "create":
		err = create()
	case "spoold":
		err = runSpoold()
	case "rrdcached":
		err = runRRDCached()
	case "cli":
		err = runCLI()
	case "native":
		err = runNative()
	default:
		err = fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil {
		log.Fatal(err)
	}
}

func key(i int) string { return fmt.Sprintf("t%06d", i) }

func profile() rrd.Layout {
	p := rrd.Layout{Step: 300 * time.Second, RRAs: rrd.DefaultRRAs(300 * time.Second)}
	for d := range *nds {
		p.DS = append(p.DS, rrd.DataSource{Name: fmt.Sprintf("ds%02d", d), Type: rrd.Counter, Heartbeat: 600 * time.Second, Min: 0, Max: nan()})
	}
	return p
}

func nan() float64 { var z float64; return z / z }

// value is the counter of data source d of file i at poll v.
func value(i, d, v int) uint64 { return uint64((i+d+1)*1000 + v*300*(d+1)) }

func create() error {
	root, err := rrd.MakeRoot(*dir)
	if err != nil {
		return err
	}
	defer root.Close()
	r, p := rrdwriter.LibRRD(root), profile()
	for i := range *files {
		if err := r.Create(filepath.Join(*dir, rrd.RRDPath(key(i))), p, start-1); err != nil {
			return err
		}
	}
	return nil
}

func runSpoold() error {
	so := spool.DefaultOptions()
	so.Dir, so.MemoryBytes = *spoolD, *segMem
	sp, err := spool.Open(so)
	if err != nil {
		return err
	}
	defer sp.Close()
	io := shm.DefaultOptions()
	ix, err := shm.New(io)
	if err != nil {
		return err
	}
	o := rrdwriter.DefaultOptions()
	o.Dir, o.Writers = *dir, *writers
	o.Prefetch = !*noPre
	p := profile()
	o.Layout = func(string) (rrd.Layout, bool) { return p, true }
	w, err := rrdwriter.New(sp, ix, o)
	if err != nil {
		return err
	}
	if *warm {
		if err := fill(sp, ix); err != nil {
			return err
		}
		if err := w.FlushAll(context.Background()); err != nil {
			return err
		}
		w.WaitRemovals()
		offset = int64(*nvals) * 300
	}
	if err := fill(sp, ix); err != nil {
		return err
	}
	// The poller wrote the entries minutes before: they are on disk, not
	// dirty pages written back during the timed part, and the garbage of
	// making them (fill's encodings, 70 KB a file) was collected then, not
	// by the writer's collections.
	if err := settle(); err != nil {
		return err
	}
	runtime.GC()
	s0 := w.Stats().ValuesWritten
	if *cpuProf != "" {
		f, err := os.Create(*cpuProf)
		if err != nil {
			return err
		}
		defer f.Close()
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	w0, c0 := pagesWritten(), cpuTime(os.Getpid())
	dev, d0 := deviceReads(*dir)
	r0, t := pagesRead(), time.Now()
	if err := w.FlushAll(context.Background()); err != nil {
		return err
	}
	el, r1 := time.Since(t), pagesRead()
	cpu := cpuTime(os.Getpid()) - c0
	reportCPU("spoold", cpu, el)
	reportReads("spoold", dev, d0, el)
	pprof.StopCPUProfile()
	if err := writeMemProfile(); err != nil {
		return err
	}
	pages := float64(pagesWritten()-w0) / float64(*files)
	s := w.Stats()
	s.ValuesWritten -= s0
	if s.ValuesWritten != uint64(*files**nvals**nds) || s.EntriesPending != 0 {
		return fmt.Errorf("spoold wrote %+v", s)
	}
	if n, err := countFiles(*spoolD); err != nil || n != 0 {
		return fmt.Errorf("spoold left %d spool entries (%v)", n, err)
	}
	fmt.Printf("%.0f %.1f %.0f %.0f\n", float64(s.ValuesWritten)/el.Seconds(), pages, float64(r1-r0)/el.Seconds(), cpuPerFile(cpu))
	return nil
}

// writeMemProfile writes the allocation profile to -memprofile, if set.
func writeMemProfile() error {
	if *memProf == "" {
		return nil
	}
	f, err := os.Create(*memProf)
	if err != nil {
		return err
	}
	defer f.Close()
	return pprof.Lookup("allocs").WriteTo(f, 0)
}

// settle writes every dirty page back and, with -cold, drops the RRD files
// of -dir from the page cache (posix_fadvise DONTNEED), so the timed part
// reads them from disk, the same for every mode; spool entries, written
// by the poller minutes before, stay cached.
func settle() error {
	syscall.Sync()
	if !*cold {
		return nil
	}
	return pagecache.DropTree(*dir)
}

// cpuTime returns the user and system CPU time of process pid so far
// (/proc/<pid>/stat utime and stime, in clock ticks of 10 ms).
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces: count from its ")".
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond
}

// cpuPerFile is cpu in µs per file updated.
func cpuPerFile(cpu time.Duration) float64 { return float64(cpu.Microseconds()) / float64(*files) }

// reportCPU prints the CPU time a mode's process used per file updated, and
// how many of the machine's cores that kept busy.
func reportCPU(mode string, cpu, wall time.Duration) {
	fmt.Fprintf(os.Stderr, "%s: %.0f µs CPU per file, %.2f cores busy\n", mode, cpuPerFile(cpu), cpu.Seconds()/wall.Seconds())
}

// pagesWritten syncs and returns /proc/vmstat nr_written: pages written
// back to disk since boot, by every process (the machine should be quiet).
func pagesWritten() uint64 {
	syscall.Sync()
	m, err := diskstat.ReadVMStat()
	if err != nil {
		return 0
	}
	return m["nr_written"]
}

// pagesRead returns /proc/vmstat pgpgin in 4 KiB pages: data read in
// from block devices since boot, by every process (the kernel counts it
// in KiB).
func pagesRead() uint64 {
	m, err := diskstat.ReadVMStat()
	if err != nil {
		return 0
	}
	return m["pgpgin"] / 4
}

// deviceReads returns the block device of the file system holding dir
// and its /proc/diskstats counters now, or an empty name if either is
// unknown.
func deviceReads(dir string) (string, diskstat.Stat) {
	d, err := diskstat.DeviceOf(dir)
	if err != nil {
		return "", diskstat.Stat{}
	}
	s, err := diskstat.ReadSample()
	if err != nil {
		return "", diskstat.Stat{}
	}
	st, ok := s.Find(d.Name)
	if !ok {
		return "", diskstat.Stat{}
	}
	return d.Name, st
}

// reportReads prints the reads the device completed since prev, per
// second of wall, their mean size (read-ahead and prefetch make a read of
// several pages), how many were in flight on average (the time all reads
// took, /proc/diskstats' read ticks, over the wall time: the queue depth
// the writer kept) and their mean latency. The device counts every
// process's reads.
func reportReads(mode, dev string, prev diskstat.Stat, wall time.Duration) {
	if name, cur := deviceReads(*dir); name != "" && name == dev {
		n := cur.ReadIOs - prev.ReadIOs
		ticks := float64(cur.ReadTicks - prev.ReadTicks) // ms
		fmt.Fprintf(os.Stderr, "%s: %.0f reads/s completed by %s, %.1f KiB each, %.1f in flight on average, %.2f ms each\n", mode,
			float64(n)/wall.Seconds(), dev, float64(cur.ReadSectors-prev.ReadSectors)/2/float64(max(n, 1)),
			ticks/float64(wall.Milliseconds()), ticks/float64(max(n, 1)))
	}
}

// countFiles counts the regular files under dir but its lock file and its
// marker.
func countFiles(dir string) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		own := path == filepath.Join(dir, spool.LockFile) || path == filepath.Join(dir, spool.MarkerFile)
		if err == nil && d.Type().IsRegular() && !own {
			n++
		}
		return err
	})
	return n, err
}

// fill writes the entries into the spool (not timed) and indexes them.
func fill(sp *spool.Spool, ix *shm.Index) error {
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < *files; i += 4 {
				for v := range *nvals {
					e := spool.Entry{Key: key(i), Time: start + offset + int64(v)*300}
					for d := range *nds {
						e.Values = append(e.Values, spool.Value{Name: fmt.Sprintf("ds%02d", d), Type: spool.Counter, Counter: value(i, d, v)})
					}
					ref, created, err := spoolEntry(sp, &e)
					if err == nil && created {
						_, err = ix.Add(ref.Hash, e.Key, ref.Time)
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// spoolEntry appends e to its key's open segment, as the poller does, or
// with -file-per-poll publishes it as a file of its own.
func spoolEntry(sp *spool.Spool, e *spool.Entry) (spool.Ref, bool, error) {
	if *perPoll {
		ref, err := sp.Write(e)
		return ref, err == nil, err
	}
	return sp.Append(e)
}

func updateArgs(i int) []string {
	var args []string
	for v := range *nvals {
		b := strconv.AppendInt(nil, start+offset+int64(v)*300, 10)
		for d := range *nds {
			b = append(b, ':')
			b = strconv.AppendUint(b, value(i, d, v), 10)
		}
		args = append(args, string(b))
	}
	return args
}

func runRRDCached() error {
	c, err := net.Dial("unix", *sock)
	if err != nil {
		return err
	}
	defer c.Close()
	rd, wr := bufio.NewReader(c), bufio.NewWriterSize(c, 1<<20)
	rounds := 1
	if *warm {
		if _, err := rrdcachedRound(rd, wr, rounds); err != nil {
			return err
		}
		offset, rounds = int64(*nvals)*300, 2
	}
	if err := settle(); err != nil {
		return err
	}
	w0, c0 := pagesWritten(), cpuTime(*peerPid)
	t := time.Now()
	journaled, err := rrdcachedRound(rd, wr, rounds)
	if err != nil {
		return err
	}
	el := time.Since(t)
	var cpu time.Duration
	if *peerPid > 0 {
		cpu = cpuTime(*peerPid) - c0
		reportCPU("rrdcached", cpu, el)
	}
	pages := float64(pagesWritten()-w0) / float64(*files)
	want := uint64(*files * *nvals)
	fmt.Printf("%.0f %.1f %.0f\n", float64(want*uint64(*nds))/el.Seconds(), pages, cpuPerFile(cpu))
	fmt.Fprintf(os.Stderr, "rrdcached: batch sent and journaled in %s, written %s later\n", journaled, el-journaled)
	return nil
}

// rrdcachedRound sends one BATCH of every file's pending values and
// waits until rrdcached has written round × files × values of them
// (STATS counts since its start); it returns how long the BATCH took.
func rrdcachedRound(rd *bufio.Reader, wr *bufio.Writer, round int) (time.Duration, error) {
	t := time.Now()
	// BATCH answers "0 Go ahead..." at once and "<n> errors" after ".".
	if err := command(wr, rd, "BATCH\n", nil); err != nil {
		return 0, err
	}
	for i := range *files {
		// Paths relative to rrdcached's -b; one value per line, as collectd
		// sends them (rrdcached's command line is bounded).
		for _, v := range updateArgs(i) {
			fmt.Fprintf(wr, "UPDATE %s %s\n", rrd.RRDPath(key(i)), v)
		}
	}
	fmt.Fprintf(wr, ".\n")
	if err := wr.Flush(); err != nil {
		return 0, err
	}
	if line, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(line, "0 ") {
		return 0, fmt.Errorf("batch: %q %v", line, err)
	}
	journaled := time.Since(t)
	want := uint64(round * *files * *nvals)
	for {
		if err := command(wr, rd, "FLUSHALL\n", nil); err != nil {
			return 0, err
		}
		stats := map[string]uint64{}
		if err := command(wr, rd, "STATS\n", stats); err != nil {
			return 0, err
		}
		if stats["DataSetsWritten"] >= want && stats["QueueLength"] == 0 {
			return journaled, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// command sends cmd and reads rrdcached's answer: "N message" then N lines.
func command(wr *bufio.Writer, rd *bufio.Reader, cmd string, stats map[string]uint64) error {
	wr.WriteString(cmd)
	if err := wr.Flush(); err != nil {
		return err
	}
	line, err := rd.ReadString('\n')
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(strings.Fields(line)[0])
	if err != nil || n < 0 {
		return fmt.Errorf("%s: %q", strings.TrimSpace(cmd), line)
	}
	for range n {
		l, err := rd.ReadString('\n')
		if err != nil {
			return err
		}
		if k, v, ok := strings.Cut(strings.TrimSpace(l), ": "); ok && stats != nil {
			stats[k], _ = strconv.ParseUint(v, 10, 64)
		}
	}
	return nil
}

func runCLI() error {
	if err := settle(); err != nil {
		return err
	}
	t := time.Now()
	for i := range *files {
		args := append([]string{"update", filepath.Join(*dir, rrd.RRDPath(key(i)))}, updateArgs(i)...)
		if out, err := exec.Command("rrdtool", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("rrdtool update: %v: %s", err, out)
		}
	}
	fmt.Printf("%.0f\n", float64(*files**nvals**nds)/time.Since(t).Seconds())
	return nil
}
