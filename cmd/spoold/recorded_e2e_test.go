package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/spoold/spoold/internal/testing/snmpsimtest"
)

// TestRecordedAgentsFiles runs spoold with the if-mib profile against
// snmpsimd serving the project's recordings of real agents' interface
// tables — a MikroTik RouterOS router without an ifIndex column (12
// interfaces), a switch without ifXTable, one with its counters only in
// ifXTable, awkward names — and an agent without IF-MIB; stops it, and
// checks with the rrdtool command that every port has its file, named
// after its ifName, holding the agent's counters, and no other; and that
// the agent without rows is warned of once and needs attention in /status.
func TestRecordedAgentsFiles(t *testing.T) {
	requireRRDTool(t)
	names := snmpsimtest.IfMIBRecordings()
	files := map[string][]byte{"bare": snmpsimtest.Recording(t, "vanishing-empty")}
	for _, n := range names {
		files[n] = snmpsimtest.Recording(t, n)
	}
	a := snmpsimtest.Start(t, files)
	dir := t.TempDir()
	var targets strings.Builder
	for c := range files {
		fmt.Fprintf(&targets, "%s 127.0.0.1:%d profile=if-mib community=%s\n", c, a.Port, c)
	}
	targetsFile := filepath.Join(dir, "targets.conf")
	writeFile(t, targetsFile, targets.String())
	p := startDaemon(t, "--spool-dir", filepath.Join(dir, "spool"), "--rrd-dir", filepath.Join(dir, "rrd"),
		"--targets", targetsFile, "--admin-listen", "127.0.0.1:0", "--poll-interval", "2s", "--poll-timeout", "1s",
		"--write-delay", "1s", "--write-jitter", "0s", "--shutdown-timeout", "1m", "--log-level", "info")
	st := p.waitFor(t, "2 poll cycles", func(st map[string]any) bool { return num(st, "last_cycle", "seq") >= 2 })
	ts, _ := st["targets"].([]any)
	for _, v := range ts {
		tg, _ := v.(map[string]any)
		attention, _ := tg["attention"].(string)
		empty := fmt.Sprint(tg["empty_tables"])
		if bare := tg["name"] == "bare"; bare != (empty == "[if]") || bare != strings.Contains(attention, "table if has no rows") {
			t.Errorf("target %v: empty_tables %s, attention %q", tg["name"], empty, attention)
		}
	}
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("spoold exited with %v after SIGTERM:\n%s", err, p.stderr)
	}
	if n := strings.Count(p.stderr.String(), `msg="table has no rows`); n != 1 {
		t.Errorf("%d warnings of a table without rows, want 1 (bare's):\n%s", n, p.stderr)
	}
	for _, n := range names {
		ports := snmpsimtest.IfMIBPorts(n)
		if got := rowFiles(dir, n); got != len(ports) {
			t.Errorf("%s: %d RRD files, want %d", n, got, len(ports))
		}
		for _, port := range ports {
			checkLastUpdate(t, filepath.Join(dir, "rrd", n, port.Segment+".rrd"), port.Values)
		}
	}
}

// checkLastUpdate checks with `rrdtool lastupdate` that file's data
// sources are the if-mib profile's and their last values want ("U":
// unknown).
func checkLastUpdate(t *testing.T, file string, want []string) {
	t.Helper()
	if _, err := os.Stat(file); err != nil {
		t.Errorf("no file: %v", err)
		return
	}
	out, err := exec.Command("rrdtool", "lastupdate", file).CombinedOutput()
	if err != nil {
		t.Fatalf("rrdtool lastupdate %s: %v\n%s", file, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	_, last, _ := strings.Cut(lines[len(lines)-1], ": ")
	got := strings.Fields(last)
	if !slices.Equal(strings.Fields(lines[0]), snmpsimtest.IfMIBValues) || len(got) != len(want) {
		t.Errorf("%s: rrdtool lastupdate:\n%s", file, out)
		return
	}
	for i := range got {
		g, gerr := strconv.ParseFloat(got[i], 64)
		w, werr := strconv.ParseFloat(want[i], 64)
		if got[i] != want[i] && (gerr != nil || werr != nil || g != w) {
			t.Errorf("%s: %s is %s, the agent's %s", file, snmpsimtest.IfMIBValues[i], got[i], want[i])
		}
	}
}
