package main

import (
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/spoolgen"
	"github.com/spoold/spoold/spool"
)

// TestDaemonSurvivesHostileSpool seeds a spool with ramp entries (100/s) of
// every fleet target and every kind of hostile content, runs the real
// daemon on it, and checks: it keeps running and polling; each misplaced or
// bad file is quarantined with a reason naming its path; each non-file is
// left alone and logged with its path; nothing outside the spool is touched;
// and every valid entry lands: rrdtool fetch reads 100/s between them.
func TestDaemonSurvivesHostileSpool(t *testing.T) {
	requireRRDTool(t)
	f := startFleet(t, 3)
	dir := t.TempDir()
	t0 := time.Now().Unix() - 300
	t0 -= t0 % 2
	const seeded = 10
	cases := seedHostileSpool(t, f, dir, t0, seeded)
	outside := filepath.Join(dir, "outside")
	outsideBefore := spoolgen.Snapshot(t, outside)
	args := daemonArgs(dir, f, "--write-delay", "1s", "--write-jitter", "0s")
	cases = refuseSymlinkedLeaf(t, args, cases)

	p := startDaemon(t, args...)
	var want struct{ loaderQ, readQ, foreign float64 }
	for _, c := range cases {
		switch c.Outcome {
		case spoolgen.QuarantinedByLoader:
			want.loaderQ++
		case spoolgen.QuarantinedOnRead:
			want.readQ++
		case spoolgen.LeftAlone:
			want.foreign++
		}
	}
	st := p.waitFor(t, "the loader's walk, the writer's quarantine and 3 cycles", func(st map[string]any) bool {
		return num(st, "loader", "progress") == 1 && num(st, "spool", "quarantined") >= want.loaderQ+want.readQ &&
			num(st, "last_cycle", "seq") >= 3
	})
	if num(st, "loader", "quarantined") != want.loaderQ || num(st, "loader", "foreign") != want.foreign ||
		num(st, "spool", "quarantined") != want.loaderQ+want.readQ {
		t.Errorf("loader quarantined %v, foreign %v, spool quarantined %v; want %v, %v, %v",
			num(st, "loader", "quarantined"), num(st, "loader", "foreign"), num(st, "spool", "quarantined"),
			want.loaderQ, want.foreign, want.loaderQ+want.readQ)
	}
	t.Logf("hostile cases %d: loader quarantined %v, foreign %v; spool quarantined %v; writer entries written %v",
		len(cases), num(st, "loader", "quarantined"), num(st, "loader", "foreign"), num(st, "spool", "quarantined"),
		num(st, "writer", "entries_written"))
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("spoold exited with %v after SIGTERM:\n%s", err, p.stderr)
	}
	checkHostileOutcomes(t, dir, cases, p.stderr.String())
	if after := spoolgen.Snapshot(t, outside); !maps.Equal(after, outsideBefore) {
		t.Errorf("files outside the spool changed:\nbefore %v\nafter  %v", outsideBefore, after)
	}
	for i := range f.sim.Fleet().Len() {
		file := filepath.Join(dir, "rrd", f.sim.Fleet().Name(i)+".rrd")
		for _, ds := range f.profile.DS {
			rows := fetchRates(t, file, ds.Name, t0+2, t0+2*(seeded-1))
			if len(rows) < seeded-2 {
				t.Errorf("%s %s: %d rows of the seeded entries, want >= %d", file, ds.Name, len(rows), seeded-2)
			}
			for ts, got := range rows {
				if got < 99 || got > 101 {
					t.Errorf("%s %s at %d: rate %.3f, seeded 100/s", file, ds.Name, ts, got)
				}
			}
		}
	}
}

// refuseSymlinkedLeaf: a symlink in place of a level directory is a fixed
// path spoold does not follow: the daemon refuses to start, naming it (it
// precreates the level directories and checks each), and starts once the
// symlink is gone. It returns the other cases.
func refuseSymlinkedLeaf(t *testing.T, args []string, cases []spoolgen.HostileCase) []spoolgen.HostileCase {
	t.Helper()
	i := slices.IndexFunc(cases, func(c spoolgen.HostileCase) bool { return c.Name == "symlink in place of a leaf directory" })
	if i < 0 {
		t.Fatal("no symlink in place of a leaf directory among the hostile cases")
	}
	path := cases[i].Path
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), path) || !strings.Contains(string(out), "is a symlink") {
		t.Fatalf("spoold with %s a symlink: %v, want a refusal naming it:\n%s", path, err, out)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	return slices.Delete(cases, i, i+1)
}

// seedHostileSpool writes ramp entries at t0, t0+2, ... for every target
// and the hostile content (for the first target, at the odd times between).
func seedHostileSpool(t *testing.T, f *e2eFleet, dir string, t0 int64, n int) []spoolgen.HostileCase {
	t.Helper()
	so := spool.DefaultOptions()
	so.Dir = filepath.Join(dir, "spool")
	sp, err := spool.Open(so)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	var keys, dsNames []string
	for _, ds := range f.profile.DS {
		dsNames = append(dsNames, ds.Name)
	}
	for i := range f.sim.Fleet().Len() {
		keys = append(keys, f.sim.Fleet().Name(i))
		for k := range n {
			ts := t0 + 2*int64(k)
			e := spool.Entry{Key: keys[i], Time: ts}
			for _, ds := range dsNames {
				e.Values = append(e.Values, spool.Value{Name: ds, Type: spool.Counter, Counter: spoolgen.RampCounter(t0, ts)})
			}
			if _, err := sp.Write(&e); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases, err := spoolgen.WriteHostile(sp, keys, t0, dsNames, filepath.Join(dir, "outside"), os.Geteuid() == 0)
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// checkHostileOutcomes checks each case after the daemon's shutdown.
func checkHostileOutcomes(t *testing.T, dir string, cases []spoolgen.HostileCase, logs string) {
	t.Helper()
	reasons := spoolgen.QuarantineReasons(t, filepath.Join(dir, "spool"))
	for _, c := range cases {
		_, err := os.Lstat(c.Path)
		switch c.Outcome {
		case spoolgen.QuarantinedByLoader, spoolgen.QuarantinedOnRead:
			if r := reasons[c.Path]; !errors.Is(err, os.ErrNotExist) || !strings.Contains(r, c.Reason) {
				t.Errorf("%s (%s): in place: %v; quarantine reason %q, want one containing %q", c.Name, c.Path, err == nil, r, c.Reason)
			}
		case spoolgen.LeftAlone:
			if err != nil || !strings.Contains(logs, c.Path) {
				t.Errorf("%s (%s): %v; logged: %v", c.Name, c.Path, err, strings.Contains(logs, c.Path))
			}
		case spoolgen.Lands:
			t.Logf("LOUD: running as root, which chmod 000 does not stop: %s was applied like any entry", c.Path)
			if !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s (%s) still in the spool after the shutdown flush", c.Name, c.Path)
			}
		}
	}
}
