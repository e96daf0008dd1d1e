package diskstat

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

// TaskIO is /proc/<pid>/io (Documentation/filesystems/proc.rst): ReadBytes
// and WriteBytes are what the task caused to be fetched from and sent to
// storage; RChar and WChar count all read/write syscalls, cached or not.
type TaskIO struct {
	RChar               uint64 `json:"rchar"`
	WChar               uint64 `json:"wchar"`
	SyscR               uint64 `json:"syscr"`
	SyscW               uint64 `json:"syscw"`
	ReadBytes           uint64 `json:"read_bytes"`
	WriteBytes          uint64 `json:"write_bytes"`
	CancelledWriteBytes uint64 `json:"cancelled_write_bytes"`
}

// BlockIO is what a thread read from and wrote to storage (OnThread):
// TaskIO's ReadBytes, and its WriteBytes less CancelledWriteBytes.
type BlockIO struct {
	ReadBytes  uint64 `json:"read_bytes"`
	WriteBytes uint64 `json:"write_bytes"`
}

// Add returns the sums of the counters of b and o.
func (b BlockIO) Add(o BlockIO) BlockIO {
	return BlockIO{ReadBytes: b.ReadBytes + o.ReadBytes, WriteBytes: b.WriteBytes + o.WriteBytes}
}

// Sub returns the counters of t minus those of prev.
func (t TaskIO) Sub(prev TaskIO) TaskIO {
	return TaskIO{
		RChar: t.RChar - prev.RChar, WChar: t.WChar - prev.WChar,
		SyscR: t.SyscR - prev.SyscR, SyscW: t.SyscW - prev.SyscW,
		ReadBytes: t.ReadBytes - prev.ReadBytes, WriteBytes: t.WriteBytes - prev.WriteBytes,
		CancelledWriteBytes: t.CancelledWriteBytes - prev.CancelledWriteBytes,
	}
}

// ParseTaskIO parses the text of /proc/thread-self/io (the format of
// /proc/<pid>/io; /proc/self/io is read through procfs, see ReadThreadIO).
// Unknown keys are ignored; a malformed line is an error.
func ParseTaskIO(r io.Reader) (TaskIO, error) {
	var t TaskIO
	err := parseKeyValues(r, ":", func(k string, v uint64) {
		if p := t.field(k); p != nil {
			*p = v
		}
	})
	return t, err
}

// field returns the counter named k, or nil.
func (t *TaskIO) field(k string) *uint64 {
	switch k {
	case "rchar":
		return &t.RChar
	case "wchar":
		return &t.WChar
	case "syscr":
		return &t.SyscR
	case "syscw":
		return &t.SyscW
	case "read_bytes":
		return &t.ReadBytes
	case "write_bytes":
		return &t.WriteBytes
	case "cancelled_write_bytes":
		return &t.CancelledWriteBytes
	}
	return nil
}

// ReadSelfIO reads /proc/self/io, the whole process, through procfs.
func ReadSelfIO() (TaskIO, error) { return readProcIO(procfs.DefaultMountPoint) }

// readProcIO reads <proc>/self/io through procfs.
func readProcIO(proc string) (TaskIO, error) {
	fs, err := procfs.NewFS(proc)
	if err != nil {
		return TaskIO{}, fmt.Errorf("read process io: %w", err)
	}
	p, err := fs.Self()
	if err != nil {
		return TaskIO{}, fmt.Errorf("read process io: %w", err)
	}
	pio, err := p.IO()
	if err != nil {
		return TaskIO{}, fmt.Errorf("read %s/self/io: %w", proc, err)
	}
	return TaskIO{
		RChar: pio.RChar, WChar: pio.WChar, SyscR: pio.SyscR, SyscW: pio.SyscW,
		ReadBytes: pio.ReadBytes, WriteBytes: pio.WriteBytes,
		CancelledWriteBytes: uint64(max(pio.CancelledWriteBytes, 0)),
	}, nil
}

// ReadThreadIO reads /proc/thread-self/io: the calling OS thread only. The
// caller should hold runtime.LockOSThread across the two samples it
// compares.
//
// Per-thread io is spoold's own code (ParseTaskIO), not procfs's: procfs
// has no /proc/thread-self (its FS.Thread(pid, tid) opens
// /proc/<pid>/task/<tid>/io by thread id, a path that an exiting thread's
// reused id can point elsewhere). OnThread, which runs around every spool
// entry and update call, reads getrusage's block counts instead.
func ReadThreadIO() (TaskIO, error) { return readTaskIO("/proc/thread-self/io") }

func readTaskIO(path string) (TaskIO, error) {
	f, err := os.Open(path)
	if err != nil {
		return TaskIO{}, err
	}
	defer f.Close()
	t, err := ParseTaskIO(f)
	if err != nil {
		return t, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ParseVMStat parses the text of /proc/vmstat into a map of counter names
// to values.
func ParseVMStat(r io.Reader) (map[string]uint64, error) {
	m := make(map[string]uint64, 64)
	err := parseKeyValues(r, " ", func(k string, v uint64) { m[k] = v })
	return m, err
}

// ReadVMStat reads /proc/vmstat.
func ReadVMStat() (map[string]uint64, error) {
	f, err := os.Open("/proc/vmstat")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseVMStat(f)
}

// parseKeyValues reads lines of "key<sep>value" with an unsigned value.
func parseKeyValues(r io.Reader, sep string, fn func(string, uint64)) error {
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		k, v, ok := strings.Cut(s, sep)
		if !ok {
			return fmt.Errorf("line %d: no %q in %q", line, sep, s)
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("line %d: %w", line, err)
		}
		fn(strings.TrimSpace(k), n)
	}
	return sc.Err()
}

// OnThread runs fn with the calling goroutine locked to its OS thread and
// returns what that thread read from and wrote to storage meanwhile: the
// kernel's block counts of the thread (getrusage(RUSAGE_THREAD): ReadBytes
// is /proc/thread-self/io's read_bytes, WriteBytes its write_bytes less
// cancelled_write_bytes, both in 512-byte units) around fn. Other threads'
// I/O is not in it. ok is false, and the counters zero, when they cannot be
// read; fn runs either way and its error is returned. Two system calls, about a microsecond: an eighth of reading
// /proc/thread-self/io twice, and no descriptor kept.
func OnThread(fn func() error) (d BlockIO, ok bool, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before, after unix.Rusage
	rerr := unix.Getrusage(unix.RUSAGE_THREAD, &before)
	err = fn()
	if rerr != nil || unix.Getrusage(unix.RUSAGE_THREAD, &after) != nil {
		return BlockIO{}, false, err
	}
	const block = 512 // getrusage's unit for ru_inblock and ru_oublock
	return BlockIO{
		ReadBytes:  uint64(after.Inblock-before.Inblock) * block,
		WriteBytes: uint64(after.Oublock-before.Oublock) * block,
	}, true, err
}
