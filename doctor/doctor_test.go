package doctor

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoold/spoold/internal/confine"
	"github.com/spoold/spoold/loader"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/spool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestEstimateLoad checks the loader formula on the design's figures:
// 3 × 16 × 256 × 500 entries take 3,072 s of sleep with nginx's defaults.
func TestEstimateLoad(t *testing.T) {
	const entries = 3 * 16 * 256 * 500
	p := loader.DefaultParams()
	tests := []struct {
		name           string
		files          int
		sleep, thresh  time.Duration
		cpu, walk      float64
		wantIterations uint64
		wantLoad       float64
	}{
		{"nginx defaults", 100, 50 * time.Millisecond, 200 * time.Millisecond, 0, 0, 61440, 3072},
		{"loader_files=1000 plus 20s walk", 1000, 50 * time.Millisecond, 200 * time.Millisecond, 0, 20, 6144, 307.2 + 20},
		{"threshold cuts iterations", 1e6, 50 * time.Millisecond, 200 * time.Millisecond, 0, 20, 100, 5 + 20},
		{"unthrottled", 100, 0, 200 * time.Millisecond, 0, 20, 61440, 20},
		{"cpu 25%", 0, 0, 200 * time.Millisecond, 0.25, 20, 0, 80},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p.Files, p.Sleep, p.Threshold, p.CPU = tc.files, tc.sleep, tc.thresh, tc.cpu
			s := SpoolSize{Entries: entries, WalkSeconds: tc.walk}
			estimateLoad(&s, p)
			if s.Iterations != tc.wantIterations || math.Abs(s.LoadSeconds-tc.wantLoad) > 1e-6 {
				t.Errorf("iterations %d, load %.3fs; want %d, %.3fs", s.Iterations, s.LoadSeconds, tc.wantIterations, tc.wantLoad)
			}
		})
	}
}

func TestSpoolFindingWarnsAndSuggests(t *testing.T) {
	o := DefaultOptions()
	s := SpoolSize{Entries: 3 * 16 * 256 * 500}
	estimateLoad(&s, o.Loader)
	f := spoolFinding(s, o)
	// Sleeps within half of 5 minutes: 6,144,000 × 0.05 / 150 = 2,048 files.
	if f.Severity != Warn || !strings.Contains(f.Fix, "--loader-files=2048") {
		t.Errorf("finding %+v: want a warning suggesting --loader-files=2048", f)
	}
	s = SpoolSize{Entries: 1000}
	estimateLoad(&s, o.Loader)
	if f := spoolFinding(s, o); f.Severity != OK {
		t.Errorf("1000 entries: %+v, want ok", f)
	}
}

// makeSpool builds a 1:2 spool with n entries in each of two leaves, plus
// files and directories the count must skip.
func makeSpool(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	for _, leaf := range []string{"a/bc", "f/00"} {
		if err := os.MkdirAll(filepath.Join(dir, leaf), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			touch(t, filepath.Join(dir, leaf, strings.Repeat("0", 14)+leaf[len(leaf)-2:]+"-"+string(rune('a'+i))))
		}
	}
	for _, d := range []string{spool.TmpDir, "quarantine", "zz"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		touch(t, filepath.Join(dir, d, "x"))
	}
	touch(t, filepath.Join(dir, "a", "stray"))
	return dir
}

func touch(t *testing.T, p string) {
	t.Helper()
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCountSpool(t *testing.T) {
	dir := makeSpool(t, 5)
	s, err := countSpool(dir, spool.MustParseLevels("1:2"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Entries != 10 || s.LeafDirs != 2 {
		t.Errorf("entries %d in %d leaves, want 10 in 2", s.Entries, s.LeafDirs)
	}
}

func testOptions(t *testing.T) Options {
	o := DefaultOptions()
	o.SpoolDir = makeSpool(t, 3)
	o.RRDDir = t.TempDir()
	return o
}

func findingsOf(r Report, check string) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Check == check {
			out = append(out, f)
		}
	}
	return out
}

func TestRunOnTempDir(t *testing.T) {
	o := testOptions(t)
	r, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"read-ahead", "atime", "space", "inodes", "nofile", "spool", "rrd-update"} {
		if len(findingsOf(r, c)) == 0 {
			t.Errorf("no %s finding in %+v", c, r.Findings)
		}
	}
	warns := 0
	for _, f := range r.Findings {
		if f.Severity != OK && f.Severity != Warn || f.Found == "" {
			t.Errorf("bad finding %+v", f)
		}
		if f.Severity == Warn {
			warns++
			if f.Fix == "" {
				t.Errorf("warning without a fix: %+v", f)
			}
		}
	}
	if warns != r.Warnings {
		t.Errorf("Warnings = %d, counted %d", r.Warnings, warns)
	}
	if r.Spool == nil || r.Spool.Entries != 6 {
		t.Errorf("spool %+v, want 6 entries", r.Spool)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil || len(back.Findings) != len(r.Findings) {
		t.Errorf("JSON round trip: %v, %d findings of %d", err, len(back.Findings), len(r.Findings))
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil || !strings.Contains(text.String(), "findings") {
		t.Errorf("text: %v\n%s", err, text.String())
	}
	if r.Update != nil {
		t.Logf("update: %+v", *r.Update)
	} else {
		t.Logf("update not measured: %+v", findingsOf(r, "rrd-update"))
	}
	left, _ := os.ReadDir(o.RRDDir)
	if len(left) != 0 {
		t.Errorf("sample left behind in %s: %v", o.RRDDir, left)
	}
}

func TestRunMountOptionsFromFixture(t *testing.T) {
	o := testOptions(t)
	o.RRD = nil
	o.ProcDir = procWithMountinfo(t, "27 1 254:0 / / rw - ext4 /dev/vda rw,discard,commit=120,data=writeback\n")
	o.SysDir = sysWithJournalTask(t, "vda", "417")
	r, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if j := findingsOf(r, "journal"); len(j) != 1 || j[0].Severity != OK || !strings.Contains(j[0].Found, "with a journal") {
		t.Errorf("journal findings %+v: want ok, with a journal", j)
	}
	at := findingsOf(r, "atime")
	if len(at) == 0 || at[0].Severity != Warn || !strings.Contains(at[0].Fix, "remount,noatime /") {
		t.Errorf("atime findings %+v: want a strictatime warning", at)
	}
	if c := findingsOf(r, "commit"); len(c) == 0 || !strings.Contains(c[0].Found, "every 120 s") {
		t.Errorf("commit findings %+v", c)
	}
	if d := findingsOf(r, "data"); len(d) == 0 || !strings.Contains(d[0].Found, "data=writeback") {
		t.Errorf("data findings %+v", d)
	}
	if d := findingsOf(r, "discard"); len(d) != 1 || d[0].Severity != Warn || !strings.Contains(d[0].Fix, "remount,nodiscard /") {
		t.Errorf("discard findings %+v: want a warning", d)
	}
	if len(findingsOf(r, "rrd-update")) != 0 {
		t.Error("update measured with RRD nil")
	}
}

// sysWithJournalTask returns a sys directory whose ext4 device dev has
// journal_task task ("<none>": no journal).
func sysWithJournalTask(t *testing.T, dev, task string) string {
	t.Helper()
	dir := t.TempDir()
	d := filepath.Join(dir, "fs", "ext4", dev)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "journal_task"), []byte(task+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestExt4WithoutJournalWarns: a spool on ext4 without a journal is a
// warning naming tune2fs, and the journal's commit and data settings are
// not reported for it.
func TestExt4WithoutJournalWarns(t *testing.T) {
	o := testOptions(t)
	o.RRD = nil
	o.ProcDir = procWithMountinfo(t, "27 1 254:0 / / rw - ext4 /dev/vda rw,relatime\n")
	o.SysDir = sysWithJournalTask(t, "vda", "<none>")
	r, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	j := findingsOf(r, "journal")
	if len(j) != 1 || j[0].Severity != Warn || !strings.Contains(j[0].Found, "without a journal") || !strings.Contains(j[0].Fix, "tune2fs -O has_journal /dev/vda") {
		t.Fatalf("journal findings %+v: want a warning with tune2fs's fix", j)
	}
	if c := findingsOf(r, "commit"); len(c) != 0 {
		t.Errorf("commit findings %+v for a file system without a journal", c)
	}
}

type failingRRD struct{ rrdwriter.RRD }

func (failingRRD) Create(string, rrd.Layout, int64) error { return errors.New("disk on fire") }

func TestRunMeasurementFailureWarns(t *testing.T) {
	o := testOptions(t)
	o.RRD = func(*rrd.Root) rrdwriter.RRD { return failingRRD{} }
	r, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	u := findingsOf(r, "rrd-update")
	if len(u) != 1 || u[0].Severity != Warn || !strings.Contains(u[0].Found, "disk on fire") {
		t.Errorf("update findings %+v", u)
	}
	if left, _ := os.ReadDir(o.RRDDir); len(left) != 0 {
		t.Errorf("temp dir left behind: %v", left)
	}
}

func TestRunMissingDirs(t *testing.T) {
	o := DefaultOptions()
	base := t.TempDir()
	o.SpoolDir, o.RRDDir = filepath.Join(base, "spool"), filepath.Join(base, "rrd")
	r, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	if r.Spool != nil || len(findingsOf(r, "spool")) != 1 || findingsOf(r, "spool")[0].Severity != OK {
		t.Errorf("missing spool: %+v", findingsOf(r, "spool"))
	}
	if ra := findingsOf(r, "read-ahead"); len(ra) != 1 || len(ra[0].Dirs) != 2 {
		t.Errorf("two dirs on one file system should share one finding: %+v", ra)
	}
	if _, err := Run(Options{}); err == nil {
		t.Error("no error without directories")
	}
}

// TestRRDDirFinding: an RRD directory spoold cannot create files in (mode
// 555, another user's) is a warning with the command to look at it;
// one it can is ok.
func TestRRDDirFinding(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want Severity
	}{
		{"writable", nil, OK},
		{"permission denied", &os.PathError{Op: "open", Path: "/x/.probe", Err: os.ErrPermission}, Warn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Report
			checkRRDDir(&r, "/srv/rrd", func(string) error { return tc.err })
			if len(r.Findings) != 1 {
				t.Fatalf("findings %+v", r.Findings)
			}
			f := r.Findings[0]
			if f.Check != "rrd-dir" || f.Severity != tc.want || (tc.want == Warn && !strings.Contains(f.Fix, "/srv/rrd")) {
				t.Fatalf("finding %+v, want severity %s", f, tc.want)
			}
		})
	}
}

// TestFixOnlyOnWarnings: an ok finding prints no fix (there is nothing to
// change, and the nofile one suggested a ulimit below the limit in force);
// a warning keeps its fix.
func TestFixOnlyOnWarnings(t *testing.T) {
	var r Report
	checkNofile(&r, Options{PollConcurrency: 1, Writers: 1})
	r.add(Finding{Check: "space", Severity: Warn, Found: "1% free", Fix: "du -xh"})
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if r.Findings[0].Severity != OK || r.Findings[0].Fix != "" {
		t.Errorf("nofile with a limit above the need: %+v, want ok without a fix", r.Findings[0])
	}
	if n := strings.Count(b.String(), "fix:"); n != 1 || !strings.Contains(b.String(), "fix: du -xh") {
		t.Errorf("want exactly the warning's fix, got:\n%s", b.String())
	}
}

// TestLandlockFinding: the daemon confined is ok; turned off or on a
// kernel without Landlock it is a warning with what changes it; no status
// given, no finding.
func TestLandlockFinding(t *testing.T) {
	for _, tc := range []struct {
		st   confine.Status
		want Severity
		fix  string
	}{
		{confine.Status{Mode: confine.Enforced, ABI: 7}, OK, ""},
		{confine.Status{Mode: confine.Off, ABI: 7}, Warn, "--landlock=false"},
		{confine.Status{Mode: confine.Unsupported, Reason: "no Landlock"}, Warn, "lsm="},
	} {
		t.Run(string(tc.st.Mode), func(t *testing.T) {
			var r Report
			checkLandlock(&r, &tc.st)
			if len(r.Findings) != 1 {
				t.Fatalf("findings %+v", r.Findings)
			}
			f := r.Findings[0]
			if f.Check != "landlock" || f.Severity != tc.want || !strings.Contains(f.Found, tc.st.String()) || !strings.Contains(f.Fix, tc.fix) {
				t.Errorf("finding %+v, want severity %s, the status and a fix naming %q", f, tc.want, tc.fix)
			}
		})
	}
	var r Report
	if checkLandlock(&r, nil); len(r.Findings) != 0 {
		t.Errorf("findings without a status: %+v", r.Findings)
	}
}
