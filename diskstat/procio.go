package diskstat

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
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

// Sub returns the counters of t minus those of prev.
func (t TaskIO) Sub(prev TaskIO) TaskIO {
	return TaskIO{
		RChar: t.RChar - prev.RChar, WChar: t.WChar - prev.WChar,
		SyscR: t.SyscR - prev.SyscR, SyscW: t.SyscW - prev.SyscW,
		ReadBytes: t.ReadBytes - prev.ReadBytes, WriteBytes: t.WriteBytes - prev.WriteBytes,
		CancelledWriteBytes: t.CancelledWriteBytes - prev.CancelledWriteBytes,
	}
}

// ParseTaskIO parses the text of /proc/<pid>/io. Unknown keys are ignored;
// a malformed line is an error.
func ParseTaskIO(r io.Reader) (TaskIO, error) {
	var t TaskIO
	fields := map[string]*uint64{
		"rchar": &t.RChar, "wchar": &t.WChar, "syscr": &t.SyscR, "syscw": &t.SyscW,
		"read_bytes": &t.ReadBytes, "write_bytes": &t.WriteBytes,
		"cancelled_write_bytes": &t.CancelledWriteBytes,
	}
	err := parseKeyValues(r, ":", func(k string, v uint64) {
		if p := fields[k]; p != nil {
			*p = v
		}
	})
	return t, err
}

// ReadSelfIO reads /proc/self/io: the whole process.
func ReadSelfIO() (TaskIO, error) { return readTaskIO("/proc/self/io") }

// ReadThreadIO reads /proc/thread-self/io: the calling OS thread only. The
// caller should hold runtime.LockOSThread across the two samples it
// compares.
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
