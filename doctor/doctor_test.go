package doctor

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoold/spoold/internal/confine"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// nginxLoader are nginx's loader defaults (100 files, 50ms sleep, 200ms
// threshold) with an estimate of a walk that takes no time.
var nginxLoader = LoaderSettings{Files: 100, Sleep: 50 * time.Millisecond, Threshold: 200 * time.Millisecond,
	Estimate: func(files uint64, _ float64) (uint64, float64, float64) {
		it := (files + 99) / 100
		return it, float64(it) * 0.05, float64(it) * 0.05
	}}

// TestSpoolFindingWarnsAndSuggests: a load longer than the limit is a
// warning whose fix is the loader_files that halves it.
func TestSpoolFindingWarnsAndSuggests(t *testing.T) {
	o := DefaultOptions()
	o.Loader = nginxLoader
	// 3 × 16 × 256 × 500 entries take 3,072 s of sleep with nginx's defaults.
	s := SpoolSize{Entries: 3 * 16 * 256 * 500, Iterations: 61440, SleepSeconds: 3072, LoadSeconds: 3072}
	f := spoolFinding(s, o)
	// Sleeps within half of 5 minutes: 6,144,000 × 0.05 / 150 = 2,048 files.
	if f.Severity != Warn || !strings.Contains(f.Fix, "--loader-files=2048") {
		t.Errorf("finding %+v: want a warning suggesting --loader-files=2048", f)
	}
	s = SpoolSize{Entries: 1000, Iterations: 10, SleepSeconds: 0.5, LoadSeconds: 0.5}
	if f := spoolFinding(s, o); f.Severity != OK {
		t.Errorf("1000 entries: %+v, want ok", f)
	}
}

// countSix counts a spool of 6 files in 2 leaf directories; a dir that
// does not exist is fs.ErrNotExist, as spool.CountFiles says.
func countSix(dir string) (uint64, int, error) {
	if _, err := os.Stat(dir); err != nil {
		return 0, 0, err
	}
	return 6, 2, nil
}

// sampleFile is a SampleRRD of plain files: a 64 KiB file, each update
// rewriting its first page.
type sampleFile struct{}

const sampleFileBytes = 64 << 10

func openSampleFile(string) (SampleRRD, error) { return sampleFile{}, nil }

func (sampleFile) Create(path string, _ int, _ time.Duration, _ int64) error {
	return os.WriteFile(path, make([]byte, sampleFileBytes), 0o644)
}

func (sampleFile) Update(path string, _ int64, values []string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteAt([]byte(strings.Join(values, ":")), 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (sampleFile) Close() error { return nil }

func testOptions(t *testing.T) Options {
	o := DefaultOptions()
	o.SpoolDir = t.TempDir()
	o.RRDDir = t.TempDir()
	o.CountSpool = countSix
	o.Loader = nginxLoader
	o.PollConcurrency, o.Writers = 1000, 8
	o.CheckRRDDir = func(string) error { return nil }
	o.OpenSampleRRD = openSampleFile
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
	for _, c := range []string{"read-ahead", "atime", "space", "inodes", "rrd-dir", "nofile", "spool", "rrd-update"} {
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
	if r.Update == nil || r.Update.FileBytes != sampleFileBytes {
		t.Errorf("update %+v, findings %+v: want one measured on the %d-byte sample", r.Update, findingsOf(r, "rrd-update"), sampleFileBytes)
	}
	left, _ := os.ReadDir(o.RRDDir)
	if len(left) != 0 {
		t.Errorf("sample left behind in %s: %v", o.RRDDir, left)
	}
}

func TestRunMountOptionsFromFixture(t *testing.T) {
	o := testOptions(t)
	o.OpenSampleRRD = nil
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
		t.Error("update measured with OpenSampleRRD nil")
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
	o.OpenSampleRRD = nil
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

type failingRRD struct{ sampleFile }

func (failingRRD) Create(string, int, time.Duration, int64) error { return errors.New("disk on fire") }

func TestRunMeasurementFailureWarns(t *testing.T) {
	o := testOptions(t)
	o.OpenSampleRRD = func(string) (SampleRRD, error) { return failingRRD{}, nil }
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
	o := testOptions(t)
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
