package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// NeedRRDTool ends the test (Missing) when the rrdtool command, which
// checks librrd's results independently, is not installed.
func NeedRRDTool(tb testing.TB) {
	tb.Helper()
	LookPath(tb, "rrdtool", "it checks librrd's results independently")
}

// RRDTool runs `rrdtool args...` and returns its output; a failure fails
// the test with the output.
func RRDTool(tb testing.TB, args ...string) string {
	tb.Helper()
	out, err := exec.Command("rrdtool", args...).CombinedOutput()
	if err != nil {
		tb.Fatalf("rrdtool %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// RRDCreate creates the RRD file path with `rrdtool create`, starting at
// start with step seconds, from the DS and RRA definitions defs; missing
// directories are created.
func RRDCreate(tb testing.TB, path string, start int64, step int, defs ...string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		tb.Fatal(err)
	}
	RRDTool(tb, append([]string{"create", path, "--start", fmt.Sprint(start), "--step", fmt.Sprint(step)}, defs...)...)
}

// RRDLastUpdate returns `rrdtool lastupdate path`: the time and the raw
// values by data source name.
func RRDLastUpdate(tb testing.TB, path string) (int64, map[string]string) {
	tb.Helper()
	lines := strings.Split(strings.TrimSpace(RRDTool(tb, "lastupdate", path)), "\n")
	names := strings.Fields(lines[0])
	ts, rest, _ := strings.Cut(lines[len(lines)-1], ":")
	vals := strings.Fields(rest)
	last, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(vals) != len(names) {
		tb.Fatalf("lastupdate output %q", lines)
	}
	m := make(map[string]string)
	for i, n := range names {
		m[n] = vals[i]
	}
	return last, m
}

// RRDFetch returns the rows of `rrdtool fetch path AVERAGE -r 300 -s start
// -e end` by time: each row's values as the shortest decimals that round
// trip, separated by a space, "nan" for an unknown one.
func RRDFetch(tb testing.TB, path string, start, end int64) map[int64]string {
	tb.Helper()
	out := RRDTool(tb, "fetch", path, "AVERAGE", "-r", "300", "-s", fmt.Sprint(start), "-e", fmt.Sprint(end))
	rows := make(map[int64]string)
	for _, line := range strings.Split(out, "\n") {
		ts, vals, ok := strings.Cut(line, ":")
		if n, err := strconv.ParseInt(strings.TrimSpace(ts), 10, 64); ok && err == nil {
			var fs []string
			for _, v := range strings.Fields(vals) {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					fs = append(fs, "nan")
					continue
				}
				fs = append(fs, strconv.FormatFloat(f, 'g', -1, 64))
			}
			rows[n] = strings.Join(fs, " ")
		}
	}
	return rows
}
