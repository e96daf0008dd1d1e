// Command writerdelay measures what the write delay buys the RRD writer:
// with polls every 5 minutes and a write delay D (no jitter), each librrd
// update carries about D/5m + 1 values per data source. For each -per
// (values per file per update) it writes -total polls per file into FILES
// RRD files in rounds of -per polls: the entries of a round are written to
// the spool and synced (the poller's part, not timed), the RRD files are
// dropped from the page cache (-cold), then the writer flushes the round
// (timed) and a sync writes its dirty pages back. It prints one line per
// -per: per, write delay, values/s, update calls, pages the process dirtied
// per value and per update (/proc/self/io write_bytes: each is written back
// once, by the sync after the round), pages written back per value and per
// update (/proc/vmstat nr_written: journal included, but every process's:
// the machine should be quiet), and KiB the process read from disk per
// update (/proc/self/io read_bytes).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spoold/spoold/diskstat"
	"github.com/spoold/spoold/internal/pagecache"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

const (
	step  = 300 * time.Second
	epoch = int64(1_700_000_100)
)

var (
	work    = flag.String("dir", "", "work directory (one sub-directory per -per)")
	files   = flag.Int("files", 2000, "RRD files")
	dsCount = flag.Int("ds", 10, "data sources per file")
	total   = flag.Int("total", 24, "polls per file (each -per must divide it)")
	perList = flag.String("per", "1,2,4,12,24", "values per file per update to measure, comma-separated")
	writers = flag.Int("writers", 4, "writer goroutines (--writers)")
	cold    = flag.Bool("cold", true, "drop the RRD files from the page cache before each round")
)

func main() {
	flag.Parse()
	if *work == "" {
		log.Fatal("writerdelay: -dir is required")
	}
	fmt.Println("# per write_delay values_per_second update_calls dirtied_pages_per_value dirtied_pages_per_update written_back_pages_per_value written_back_pages_per_update read_kib_per_update")
	for _, f := range strings.Split(*perList, ",") {
		per, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || per < 1 || *total%per != 0 {
			log.Fatalf("writerdelay: -per %q: want a divisor of -total %d", f, *total)
		}
		if err := measure(per); err != nil {
			log.Fatalf("writerdelay: %d values per update: %v", per, err)
		}
	}
}

func target(i int) string { return "dev" + strconv.Itoa(i) }

func profile() rrd.Layout {
	p := rrd.Layout{Step: step, RRAs: rrd.DefaultRRAs(step)}
	for d := range *dsCount {
		p.DS = append(p.DS, rrd.DataSource{Name: "in" + strconv.Itoa(d), Type: rrd.Counter,
			Heartbeat: 2 * step, Min: 0, Max: math.NaN()})
	}
	return p
}

// result sums the timed flushes of one -per.
type result struct {
	elapsed time.Duration
	pages   uint64 // written back, machine-wide
	read    uint64 // bytes the process read from disk
	dirtied uint64 // bytes of page cache the process dirtied
}

func measure(per int) error {
	dir := filepath.Join(*work, "per"+strconv.Itoa(per))
	so := spool.DefaultOptions()
	so.Dir = filepath.Join(dir, "spool")
	sp, err := spool.Open(so)
	if err != nil {
		return err
	}
	defer sp.Close()
	ix, err := shm.New(shm.DefaultOptions())
	if err != nil {
		return err
	}
	o := rrdwriter.DefaultOptions()
	o.Dir, o.Writers, o.WriteDelay, o.WriteJitter = filepath.Join(dir, "rrd"), *writers, 0, 0
	p := profile()
	o.Layout = func(string) (rrd.Layout, bool) { return p, true }
	if err := createFiles(o.Dir, p); err != nil {
		return err
	}
	w, err := rrdwriter.New(sp, ix, o)
	if err != nil {
		return err
	}
	var r result
	for round := range *total / per {
		if err := writeRound(sp, ix, round, per); err != nil {
			return err
		}
		if err := settle(o.Dir); err != nil {
			return err
		}
		if err := r.flush(w); err != nil {
			return err
		}
	}
	s := w.Stats()
	want := uint64(*files * *total * *dsCount)
	if s.ValuesWritten != want || s.EntriesPending != 0 {
		return fmt.Errorf("wrote %d values (%d pending), want %d", s.ValuesWritten, s.EntriesPending, want)
	}
	page := float64(os.Getpagesize())
	fmt.Printf("%d %s %.0f %d %.4f %.2f %.4f %.2f %.1f\n", per, time.Duration(per-1)*step, float64(want)/r.elapsed.Seconds(),
		s.UpdateCalls, float64(r.dirtied)/page/float64(want), float64(r.dirtied)/page/float64(s.UpdateCalls),
		float64(r.pages)/float64(want), float64(r.pages)/float64(s.UpdateCalls), float64(r.read)/1024/float64(s.UpdateCalls))
	return os.RemoveAll(dir)
}

// flush times one FlushAll and counts the pages it made the kernel write
// back (a sync after it) and the bytes the process read from disk.
func (r *result) flush(w *rrdwriter.Writer) error {
	io0, err := diskstat.ReadSelfIO()
	if err != nil {
		return err
	}
	pg0, err := pagesWritten()
	if err != nil {
		return err
	}
	t := time.Now()
	if err := w.FlushAll(context.Background()); err != nil {
		return err
	}
	r.elapsed += time.Since(t)
	pg1, err := pagesWritten()
	if err != nil {
		return err
	}
	io1, err := diskstat.ReadSelfIO()
	if err != nil {
		return err
	}
	r.pages += pg1 - pg0
	d := io1.Sub(io0)
	r.read += d.ReadBytes
	r.dirtied += d.WriteBytes
	return nil
}

func createFiles(dir string, p rrd.Layout) error {
	root, err := rrd.MakeRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	lib := rrdwriter.LibRRD(root)
	for i := range *files {
		if err := lib.Create(filepath.Join(dir, rrd.RRDPath(target(i))), p, epoch-1); err != nil {
			return err
		}
	}
	return nil
}

// writeRound writes and indexes the next per polls of every file.
func writeRound(sp *spool.Spool, ix *shm.Index, round, per int) error {
	for i := range *files {
		for k := range per {
			poll := round*per + k
			e := spool.Entry{Key: target(i), Time: epoch + int64(poll)*int64(step/time.Second)}
			for d := range *dsCount {
				e.Values = append(e.Values, spool.Value{Name: "in" + strconv.Itoa(d), Type: spool.Counter,
					Counter: uint64((i + 1) * (d + 1) * (poll + 1) * 1000)})
			}
			ref, err := sp.Write(&e)
			if err != nil {
				return err
			}
			if _, err := ix.Add(ref.Hash, e.Key, e.Time); err != nil {
				return err
			}
		}
	}
	return nil
}

// settle writes every dirty page back and, with -cold, drops the RRD files
// from the page cache, so the timed flush reads them from disk.
func settle(dir string) error {
	syscall.Sync()
	if !*cold {
		return nil
	}
	return pagecache.DropTree(dir)
}

// pagesWritten syncs and returns /proc/vmstat nr_written.
func pagesWritten() (uint64, error) {
	syscall.Sync()
	m, err := diskstat.ReadVMStat()
	if err != nil {
		return 0, err
	}
	return m["nr_written"], nil
}
