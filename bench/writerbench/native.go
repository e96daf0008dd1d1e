package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spoold/spoold/rrd"
)

// runNative is the native update path's own cost, as rrdfloor is
// librrd's: the -files files of -dir updated with their -values rows each
// (the rows rrdfloor and rrdcached get), one rrd.HeaderCache.Update a file,
// -writers goroutines taking the files in turn, nothing else. It prints
//
//	<values/s (a data source's value each, as rrdfloor counts)> <µs of CPU per file> <4 KiB pages read in per file> <head pages> <archives>
//
// CPU is this process's user + system time over the updates only: the
// rows are formatted before the clock starts, as rrdfloor's are (into one
// string, which the garbage collector does not scan); pages read are
// this process's, /proc/self/io read_bytes, as rrdfloor counts them;
// head pages are the pages the live head of the first file spans (its
// last update, PDP and CDP prep and row pointers).
func runNative() error {
	root, err := rrd.OpenRoot(*dir)
	if err != nil {
		return err
	}
	defer root.Close()
	head, rras, err := headPages(root, filepath.Join(*dir, rrd.RRDPath(key(0))))
	if err != nil {
		return err
	}
	if err := settle(); err != nil {
		return err
	}
	text, ends := formatRows()
	paths := make([]string, *files)
	for i := range paths {
		paths[i] = filepath.Join(*dir, rrd.RRDPath(key(i)))
	}
	c := rrd.NewHeaderCache(root, 1024)
	defer c.Close()
	if *cpuProf != "" {
		f, err := os.Create(*cpuProf)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	pages0, cpu0, t0 := selfReadPages(), selfCPU(), time.Now()
	var next atomic.Int64
	errs := make(chan error, *writers)
	var wg sync.WaitGroup
	for range *writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rows := make([]rrd.Sample, *nvals)
			for v := range rows {
				rows[v] = rrd.Sample{Time: start + int64(v)*300, Values: make([]string, *nds)}
			}
			for i := int(next.Add(1) - 1); i < *files; i = int(next.Add(1) - 1) {
				k := i * *nvals * *nds
				for v := range rows {
					for d := range rows[v].Values {
						rows[v].Values[d] = text[ends[k]:ends[k+1]]
						k++
					}
				}
				if _, err := c.Update(paths[i], nil, rows); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	wall, cpu, pages := time.Since(t0), selfCPU()-cpu0, selfReadPages()-pages0
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

// formatRows formats every value of updateArgs, file after file, row
// after row, into text: value k is text[ends[k]:ends[k+1]].
func formatRows() (text string, ends []int) {
	var b []byte
	ends = append(make([]int, 0, *files**nvals**nds+1), 0)
	for i := range *files {
		for v := range *nvals {
			for d := range *nds {
				b = strconv.AppendUint(b, value(i, d, v), 10)
				ends = append(ends, len(b))
			}
		}
	}
	return string(b), ends
}

// headPages returns the 4 KiB pages the live head of the file at path
// beneath root spans, and its archives.
func headPages(root *rrd.Root, path string) (pages int64, rras int, err error) {
	fd, err := root.OpenHeader(path)
	if err != nil {
		return 0, 0, err
	}
	f := os.NewFile(uintptr(fd), path)
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

// selfReadPages is the 4 KiB pages this process had read from the
// storage layer (/proc/self/io read_bytes).
func selfReadPages() float64 {
	b, _ := os.ReadFile("/proc/self/io")
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "read_bytes: "); ok {
			n, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return n / 4096
		}
	}
	return 0
}

// selfCPU is this process's user and system CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
