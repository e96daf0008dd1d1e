package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spoold/spoold/rrd"
)

// runNative is the native update path's own cost, as rrdfloor is
// librrd's: the -files files of -dir updated with their -values rows each
// (the rows rrdfloor and rrdcached get), one rrd.Files.Update a file,
// -writers goroutines taking the files in turn, nothing else. It prints
//
//	<values/s (a data source's value each, as rrdfloor counts)> <µs of CPU per file> <4 KiB pages read in per file> <head pages> <archives>
//
// CPU is this process's user + system time over the updates, the rows'
// formatting included (made file by file: a heap of every file's rows
// would cost more in garbage collection than their formatting); pages read
// are /proc/vmstat pgpgin (every process: the machine should be quiet);
// head pages are the pages the live head of the first file spans (its
// last update, PDP and CDP prep and row pointers).
func runNative() error {
	head, rras, err := headPages(filepath.Join(*dir, rrd.RRDPath(key(0))))
	if err != nil {
		return err
	}
	if err := settle(); err != nil {
		return err
	}
	c := rrd.NewFiles(1024)
	defer c.Close()
	pages0, cpu0, t0 := pagesRead(), selfCPU(), time.Now()
	var next atomic.Int64
	errs := make(chan error, *writers)
	var wg sync.WaitGroup
	for range *writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < *files; i = int(next.Add(1) - 1) {
				if _, err := c.Update(filepath.Join(*dir, rrd.RRDPath(key(i))), nil, nativeRows(i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	wall, cpu, pages := time.Since(t0), selfCPU()-cpu0, pagesRead()-pages0
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	if s := c.Stats(); len(s.Fallbacks) != 0 {
		return fmt.Errorf("the native path fell back: %v", s.Fallbacks)
	}
	reportCPU("native", cpu, wall)
	fmt.Printf("%.0f %.0f %.1f %d %d\n", float64(*files**nvals**nds)/wall.Seconds(), cpuPerFile(cpu),
		float64(pages)/float64(*files), head, rras)
	return nil
}

// nativeRows is updateArgs(i) as rows.
func nativeRows(i int) []rrd.Row {
	out := make([]rrd.Row, *nvals)
	for v := range out {
		r := rrd.Row{Time: start + int64(v)*300, Values: make([]string, *nds)}
		for d := range r.Values {
			r.Values[d] = strconv.FormatUint(value(i, d, v), 10)
		}
		out[v] = r
	}
	return out
}

// headPages returns the 4 KiB pages the live head of the file at path
// spans, and its archives.
func headPages(path string) (pages int64, rras int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	b := make([]byte, 1<<20)
	got, err := f.ReadAt(b, 0)
	if got == 0 {
		return 0, 0, err
	}
	b = b[:got]
	h, _, err := rrd.ParseHeader(b)
	if err != nil || h == nil {
		return 0, 0, fmt.Errorf("read the header of %s: %v", path, err)
	}
	off, n := h.LiveRange()
	return (off+n-1)/4096 - off/4096 + 1, len(h.RRA), nil
}

// selfCPU is this process's user and system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
