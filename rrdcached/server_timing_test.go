package rrdcached_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/internal/testing/rrdctest"
	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/rrdcached"
)

// benchFiles and benchValues: each BATCH carries one UPDATE of
// benchValues values for each of benchFiles files.
const benchFiles, benchValues = 100, 12

// benchDir makes benchFiles copies of the fixture's a.rrd in a new
// directory.
func benchDir(b *testing.B) string {
	dir := filepath.Join(b.TempDir(), "rrd")
	rrdctest.Prepare(b, dir)
	src, err := os.ReadFile(filepath.Join(dir, "a.rrd"))
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < benchFiles; i++ {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.rrd", i)), src, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkBatchUpdates sends BATCHes of UPDATEs (benchFiles files ×
// benchValues values each) over a unix socket and waits for each batch's
// answer, to Debian's rrdcached (-w 3600 -f 7200: it journals and caches, writes
// nothing) and to the server with the tests' in-memory backend (no spool,
// so this is the protocol layer's own cost, an upper bound for spoold),
// in the same run, interleaved. updates/s is values acknowledged per
// second; server-cpu-us/update is the server's CPU time per value
// (rrdcached's process; for the server, this process less the client's
// thread), which a loaded machine changes less than the rate.
func BenchmarkBatchUpdates(b *testing.B) {
	testenv.LookPath(b, "rrdcached", "the benchmark's peer")
	for _, peer := range []string{"rrdcached", "server", "server", "rrdcached"} {
		b.Run(peer, func(b *testing.B) {
			dir := benchDir(b)
			sock := filepath.Join(filepath.Dir(dir), "sock")
			var serverCPU func() time.Duration
			if peer == "rrdcached" {
				p := rrdctest.Start(b, dir, "-w", "3600", "-f", "7200", "-l", "unix:"+sock)
				serverCPU = func() time.Duration { return processCPU(b, p.Process().Pid) }
			} else {
				opts := rrdcached.DefaultOptions()
				opts.Dir, opts.Listeners = dir, []rrdcached.ListenerOptions{{Spec: "unix:" + sock}}
				s, err := rrdcached.New(opts, newMemBackend(dir), nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
				serverCPU = func() time.Duration { return processCPU(b, os.Getpid()) }
			}
			benchBatches(b, sock, serverCPU, peer != "rrdcached")
		})
	}
}

// processCPU is the user and system time of process pid so far.
func processCPU(b *testing.B, pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// Fields after the command's ")": state is field 3, utime 14, stime 15.
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	ut, _ := strconv.ParseInt(f[14-3], 10, 64)
	st, _ := strconv.ParseInt(f[15-3], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// threadCPU is the calling thread's CPU time.
func threadCPU(b *testing.B) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ts.Nano())
}

// benchBatches runs the client on its own locked thread, so that
// inProcess (the server is this process) can take the client's CPU out.
func benchBatches(b *testing.B, sock string, serverCPU func() time.Duration, inProcess bool) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, err := net.Dial("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	t := rrdctest.Begin
	var line strings.Builder
	b.ResetTimer()
	start, cpu0, client0 := time.Now(), serverCPU(), threadCPU(b)
	for i := 0; i < b.N; i++ {
		c.SetDeadline(time.Now().Add(30 * time.Second))
		w.WriteString("BATCH\n")
		for f := 0; f < benchFiles; f++ {
			line.Reset()
			fmt.Fprintf(&line, "UPDATE f%03d.rrd", f)
			for v := 1; v <= benchValues; v++ {
				ts := strconv.Itoa(t + v*rrdctest.Step)
				line.WriteString(" " + ts + ":" + ts + ":1")
			}
			w.WriteString(line.String() + "\n")
		}
		w.WriteString(".\n")
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		if rep, err := rrdcached.ReadReply(r); err != nil || rep.Message != "Go ahead.  End with dot '.' on its own line." {
			b.Fatalf("BATCH: %q, %v", rep, err)
		}
		if rep, err := rrdcached.ReadReply(r); err != nil || rep.Status != 0 {
			b.Fatalf("batch answer: %q, %v", rep, err)
		}
		t += benchValues * rrdctest.Step
	}
	elapsed, cpu := time.Since(start), serverCPU()-cpu0
	if inProcess {
		cpu -= threadCPU(b) - client0
	}
	n := float64(b.N * benchFiles * benchValues)
	b.ReportMetric(n/elapsed.Seconds(), "updates/s")
	b.ReportMetric(float64(cpu.Microseconds())/n, "server-cpu-us/update")
}

// BenchmarkParseCommand is the parse of one UPDATE of 40 values, as
// rrdcached's clients send it, without escapes.
func BenchmarkParseCommand(b *testing.B) {
	vals := make([]string, 40)
	for i := range vals {
		vals[i] = strconv.Itoa(100 + i*7)
	}
	line := []byte("UPDATE d01/f00001.rrd 1700000101:" + strings.Join(vals, ":"))
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rrdcached.ParseCommand(line); err != nil {
			b.Fatal(err)
		}
	}
}
