package main

import (
	"bytes"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/loader"
	"github.com/spoold/spoold/rrdwriter"
)

// okTargets writes a targets file that -t accepts.
func okTargets(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "targets.conf")
	if err := os.WriteFile(path, []byte("r1 127.0.0.1 profile=host community=x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckConfigRefusesWhatTheDaemonRefuses: each flag value here passed
// `spoold -t` ("configuration ok", exit 0) and then made the daemon exit 1
// with a message that named no flag, or was accepted and acted oddly
// (item 9: a write rate of NaN or 1e-12 was no cap, a 1-byte index never
// took an entry). -t now refuses each, naming the flag, as the daemon does.
func TestCheckConfigRefusesWhatTheDaemonRefuses(t *testing.T) {
	targets := okTargets(t)
	for _, arg := range []string{
		"--poll-cycle-timeout=1h", "--poll-cycle-timeout=-1s", "--poll-retries=11", "--poll-max-varbinds=1001",
		"--keys-zone=0", "--keys-zone=1", "--admin-listen=garbage", "--admin-listen=127.0.0.1:99999",
		"--write-rate=NaN", "--write-rate=1e-12", "--write-rate=1e-300", "--write-rate=+Inf", "--write-rate=-1",
		"--loader-cpu=5e-324", "--loader-cpu=0.00001%",
		"--shard=0/3", "--shard=4/3", "--shard=1/4097", "--shard=2", "--forward=unix:", "--forward=tcp:", "--forward=::1:42217",
		"--gomaxprocs=-1", "--gc-percent=-1",
	} {
		t.Run(arg, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run([]string{"-t", "--targets", targets, "--rrd-dir", t.TempDir(), arg}, &stdout, &stderr)
			if code == exitOK || strings.Contains(stdout.String(), "configuration ok") {
				t.Fatalf("exit %d, stdout %q: accepted", code, stdout.String())
			}
			flag, _, _ := strings.Cut(arg, "=")
			if !strings.Contains(stderr.String(), flag) {
				t.Fatalf("error %q does not name %s", stderr.String(), flag)
			}
		})
	}
}

// TestCheckConfigAcceptsTheEdgesOfTheRanges: the ends of each documented
// range pass.
func TestCheckConfigAcceptsTheEdgesOfTheRanges(t *testing.T) {
	targets := okTargets(t)
	for _, arg := range []string{
		"--poll-cycle-timeout=5m", "--poll-cycle-timeout=0s", "--poll-retries=10", "--poll-retries=0",
		"--poll-max-varbinds=1000", "--keys-zone=1k", "--admin-listen=", "--admin-listen=[::1]:0",
		"--admin-listen=localhost:8780", "--write-rate=0", "--write-rate=0.001", "--write-rate=1000000",
		"--loader-cpu=0.1%", "--loader-cpu=100%", "--loader-cpu=0",
		"--shard=1/1", "--shard=4096/4096", "--shard=", "--forward=tcp:127.0.0.1:42217", "--forward=/run/rrdcached.sock", "--forward=[::1]",
		"--gomaxprocs=0", "--gomaxprocs=1", "--gc-percent=0", "--gc-percent=1",
	} {
		t.Run(arg, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run([]string{"-t", "--targets", targets, "--rrd-dir", t.TempDir(), arg}, &stdout, &stderr); code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr.String())
			}
		})
	}
}

// rangedFlags are the flags whose documented range FuzzDaemonFlags checks.
var rangedFlags = []string{"write-rate", "keys-zone", "loader-cpu", "poll-retries", "poll-max-varbinds",
	"poll-cycle-timeout", "poll-interval", "admin-listen", "loader-files", "loader-sleep", "loader-threshold", "shard"}

// FuzzDaemonFlags: whatever value of a flag the daemon's check accepts
// (the daemon and -t share it) lies in the range docs/configuration.md
// documents, and the settings -t prints are accepted again as flags and
// print the same.
func FuzzDaemonFlags(f *testing.F) {
	for i, v := range []string{"0.001", "1k", "-0", "10", "1000", "5m", "1s", "[::1]:0", "100", "0s", "1h"} {
		f.Add(uint8(i), v)
	}
	f.Add(uint8(0), "NaN")
	f.Add(uint8(2), "5e-324")
	f.Fuzz(func(t *testing.T, which uint8, value string) {
		flag := rangedFlags[int(which)%len(rangedFlags)]
		cfg := defaultConfig()
		fs, _ := daemonFlags(&cfg)
		fs.SetOutput(io.Discard)
		if fs.Parse([]string{"--" + flag + "=" + value}) != nil || cfg.check() != nil {
			return
		}
		checkRanges(t, flag+"="+value, &cfg)
		printed := settings(fs)
		var args []string
		for k, v := range printed {
			args = append(args, "--"+k+"="+v)
		}
		again := defaultConfig()
		fs2, _ := daemonFlags(&again)
		if err := fs2.Parse(args); err != nil {
			t.Fatalf("--%s=%q: printed settings refused: %v", flag, value, err)
		}
		if err := again.check(); err != nil {
			t.Fatalf("--%s=%q: printed settings refused: %v", flag, value, err)
		}
		if p2 := settings(fs2); !maps.Equal(printed, p2) {
			t.Fatalf("--%s=%q: settings %v, printed again %v", flag, value, printed, p2)
		}
	})
}

// checkRanges fails t unless every ranged value of c lies in its
// documented range.
func checkRanges(t *testing.T, arg string, c *config) {
	t.Helper()
	rate, cpu := c.writer.WriteRate, c.loader.Params.CPU
	for _, r := range []struct {
		ok   bool
		what string
	}{
		{rate == 0 || rate >= rrdwriter.MinWriteRate && rate <= rrdwriter.MaxWriteRate, "--write-rate 0 or 0.001 to 1000000"},
		{c.index.MaxBytes >= 1<<10, "--keys-zone at least 1k"},
		{cpu == 0 && !math.Signbit(cpu) || cpu >= loader.MinCPU && cpu <= 1, "--loader-cpu 0 or 0.1% to 100%"},
		{c.poller.Retries >= 0 && c.poller.Retries <= 10, "--poll-retries 0 to 10"},
		{c.poller.MaxVarbinds >= 1 && c.poller.MaxVarbinds <= 1000, "--poll-max-varbinds 1 to 1000"},
		{c.poller.CycleTimeout >= 0 && c.poller.CycleTimeout <= c.poller.Interval, "--poll-cycle-timeout 0 to --poll-interval"},
		{c.poller.Interval >= time.Second, "--poll-interval at least 1s"},
		{c.poller.Shard == (fleet.Shard{}) || c.poller.Shard.K >= 1 && c.poller.Shard.K <= c.poller.Shard.N && c.poller.Shard.N <= 4096, "--shard K/N, 1 ≤ K ≤ N ≤ 4096"},
	} {
		if !r.ok {
			t.Fatalf("%s accepted: want %s", arg, r.what)
		}
	}
}

// TestCheckConfigRefusesAnRRDDirItCannotWrite: -t (and the daemon's start,
// through the same preflight) fails when files cannot be created in
// --rrd-dir, naming the flag; a mode 555 directory is tested in
// rrdwriter.TestCheckDir.
func TestCheckConfigRefusesAnRRDDirItCannotWrite(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	os.WriteFile(notDir, nil, 0o600)
	for _, tc := range []struct{ name, dir string }{
		{"a file", notDir},
		{"below a file", filepath.Join(notDir, "rrd")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run([]string{"-t", "--targets", okTargets(t), "--rrd-dir", tc.dir}, &stdout, &stderr); code != exitError {
				t.Fatalf("exit %d, want %d: %s", code, exitError, stderr.String())
			}
			if msg := stderr.String(); !strings.Contains(msg, "--rrd-dir") || !strings.Contains(msg, tc.dir) {
				t.Fatalf("error %q does not name --rrd-dir %s", msg, tc.dir)
			}
		})
	}
}

// TestCheckConfigRefusesOverlappingDirectories: `--spool-dir X --rrd-dir
// X` passed `-t`, and the rescan then moved the daemon's RRD files into
// quarantine as files at the spool root (the writer recreated them empty).
// The same directory, one inside the other, or either reached through a
// symlink, is refused by -t and at start, naming both flags.
func TestCheckConfigRefusesOverlappingDirectories(t *testing.T) {
	targets := okTargets(t)
	dir := t.TempDir()
	link := filepath.Join(dir, "link")
	if err := os.Mkdir(filepath.Join(dir, "real"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "real"), link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, spool, rrd string
		apart            bool
	}{
		{"the same", dir + "/x", dir + "/x", false},
		{"the same spelled twice", dir + "/x", dir + "/y/../x/", false},
		{"rrd inside spool", dir + "/x", dir + "/x/rrd", false},
		{"spool inside rrd", dir + "/x/a/spool", dir + "/x", false},
		{"the same through a symlink", link + "/s", dir + "/real/s", false},
		{"rrd inside spool through a symlink", dir + "/real", link + "/rrd", false},
		{"siblings", dir + "/x/spool", dir + "/x/rrd", true},
		{"a common prefix of names", dir + "/x", dir + "/xx", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, mode := range [][]string{{"-t"}, {"--admin-listen="}} {
				var stdout, stderr bytes.Buffer
				args := append(mode, "--targets", targets, "--spool-dir", tc.spool, "--rrd-dir", tc.rrd)
				code := run(args, &stdout, &stderr)
				msg := stderr.String()
				overlap := strings.Contains(msg, "--spool-dir") && strings.Contains(msg, "--rrd-dir") && strings.Contains(msg, "overlap")
				if tc.apart && overlap || !tc.apart && (code == exitOK || !overlap) {
					t.Fatalf("spoold %s: exit %d, stderr %q", strings.Join(args, " "), code, msg)
				}
				if tc.apart && mode[0] == "-t" {
					break // the daemon would run
				}
			}
		})
	}
}

// TestProcs: --gomaxprocs 0 gives the writers a P each beside the CPUs
// (two writers waiting for the disk no longer leave two CPUs idle), keeps
// an operator's GOMAXPROCS environment variable, and a value given wins.
func TestProcs(t *testing.T) {
	for _, c := range []struct {
		flag, writers int
		env           bool
		inForce, want int
	}{
		{0, 4, false, 2, 6}, {0, 1, false, 8, 9}, {0, 4, true, 3, 3}, {5, 4, false, 2, 5}, {5, 4, true, 3, 5},
	} {
		cfg := defaultConfig()
		cfg.gomaxprocs, cfg.writer.Writers = c.flag, c.writers
		if got := cfg.procs(c.env, c.inForce); got != c.want {
			t.Errorf("--gomaxprocs %d --writers %d, environment set %v, %d in force: %d, want %d", c.flag, c.writers, c.env, c.inForce, got, c.want)
		}
	}
}

// TestGCTarget: --gc-percent 0 leaves the runtime's GOGC (Go's, or an
// operator's GOGC environment variable), and a value given is set.
func TestGCTarget(t *testing.T) {
	for _, c := range []struct {
		flag, want int
		set        bool
	}{
		{0, 0, false}, {50, 50, true}, {200, 200, true},
	} {
		cfg := defaultConfig()
		cfg.gcPercent = c.flag
		if got, set := cfg.gcTarget(); got != c.want || set != c.set {
			t.Errorf("--gc-percent %d: %d, %v; want %d, %v", c.flag, got, set, c.want, c.set)
		}
	}
}
