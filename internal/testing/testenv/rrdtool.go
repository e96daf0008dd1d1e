package testenv

import (
	"os/exec"
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
