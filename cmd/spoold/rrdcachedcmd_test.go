package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// debianOpts is the command line Debian's init script builds from the
// /etc/default/rrdcached the rrdcached package ships (BASE_OPTIONS, -b
// BASE_PATH, -j JOURNAL_PATH, -p PIDFILE, -l unix:SOCKFILE), with the
// paths moved under dir.
func debianOpts(t *testing.T, dir string) []string {
	t.Helper()
	testenv.LookPath(t, "rrdcached", "its package ships /etc/default/rrdcached, whose line spoold rrdcached takes")
	b, err := os.ReadFile("/etc/default/rrdcached")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if ok && !strings.HasPrefix(k, "#") {
			vars[k] = strings.Trim(v, `"`)
		}
	}
	for _, k := range []string{"BASE_OPTIONS", "BASE_PATH", "JOURNAL_PATH", "PIDFILE", "SOCKFILE"} {
		if _, ok := vars[k]; !ok {
			t.Fatalf("/etc/default/rrdcached sets no %s", k)
		}
	}
	opts := strings.Fields(vars["BASE_OPTIONS"])
	return append(opts, "-b", filepath.Join(dir, vars["BASE_PATH"]), "-j", filepath.Join(dir, vars["JOURNAL_PATH"]),
		"-p", filepath.Join(dir, vars["PIDFILE"]), "-l", "unix:"+filepath.Join(dir, vars["SOCKFILE"]))
}

// TestRRDCachedCommandLineSettings: Debian's line gives rrdcached's
// defaults where spoold has the same knob (-w 300, -z 0, -t 4), the
// journal directory as the spool, the base directory as --rrd-dir, and
// needs no targets file.
func TestRRDCachedCommandLineSettings(t *testing.T) {
	dir := t.TempDir()
	opts := debianOpts(t, dir)
	os.MkdirAll(filepath.Join(dir, "var/lib/rrdcached/db"), 0o755)
	var stdout, stderr bytes.Buffer
	args := append(append([]string{"rrdcached"}, opts...), "--", "--test")
	if code := run(args, &stdout, &stderr); code != exitOK {
		t.Fatalf("spoold %q: exit %d\n%s", args, code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"write-delay=5m0s\n", "write-jitter=0s\n", "writers=4\n", "targets=\n",
		"spool-dir=" + filepath.Join(dir, "var/lib/rrdcached/journal") + "\n",
		"rrd-dir=" + filepath.Join(dir, "var/lib/rrdcached/db") + "\n",
		"listen=unix:" + filepath.Join(dir, "var/run/rrdcached.sock") + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("settings lack %q:\n%s", want, out)
		}
	}
}

// TestRRDCachedCommandLineRefusals: an option spoold cannot honour is
// refused, naming the option and what to use instead.
func TestRRDCachedCommandLineRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-U", "_rrdcached"}, "-U is not supported: spoold does not change its user; start it as that user (systemd User="},
		{[]string{"-G", "_rrdcached"}, "-G is not supported: spoold does not change its group; start it as that group (systemd Group="},
		{[]string{"-O"}, "-O is not supported"},
		{[]string{"-gX"}, "unknown option -X"},
		{[]string{"-w", "five"}, `option -w "five": want seconds`},
		{[]string{"-w"}, "option -w needs a value"},
		{[]string{"-t", "0"}, `option -t "0"`},
		{[]string{"stray"}, `unexpected argument "stray"`},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(append([]string{"rrdcached"}, c.args...), &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("spoold rrdcached %q: exit %d, %q; want exit %d naming %q", c.args, code, stderr.String(), exitUsage, c.want)
		}
	}
}

// TestRRDCachedOptionTranslation: rrdcached's option forms (grouped
// switches, values attached, suffixed timeouts, -l address forms) become
// spoold's flags, each -s/-m/-P before the -l it applies to.
func TestRRDCachedOptionTranslation(t *testing.T) {
	got, err := rrdcachedFlags([]string{"-gF", "-w5m", "-z", "1h", "-s", "www-data", "-m", "0660", "-l", "/run/r.sock", "-P", "FLUSH,PENDING", "-l", "127.0.0.1", "-l", "[::1]:4000", "-f", "3600", "-a", "2", "-V", "LOG_WARNING"})
	if err != nil {
		t.Fatal(err)
	}
	if !got.foreground {
		t.Errorf("-gF: not in the foreground")
	}
	s := strings.Join(got.flags, " ")
	for _, want := range []string{"--write-delay 5m0s", "--write-jitter 1h0m0s",
		"--listen-group www-data --listen-mode 0660 --listen unix:/run/r.sock --listen-permissions FLUSH,PENDING --listen tcp:127.0.0.1 --listen tcp:[::1]:4000",
		"--log-level warn"} {
		if !strings.Contains(s, want) {
			t.Errorf("flags %q lack %q", s, want)
		}
	}
	if strings.Contains(s, "rrdcached.sock") {
		t.Errorf("flags %q add the default socket though -l was given", s)
	}
}

// TestDaemonListenWithoutTargets: the plain daemon serving the protocol
// starts without --targets (the default file absent) and polls nothing.
func TestDaemonListenWithoutTargets(t *testing.T) {
	r := newProtoRig(t)
	args := r.args()
	for i := range args {
		if args[i] == "--targets" {
			args = append(args[:i], args[i+2:]...)
			break
		}
	}
	p := startDaemon(t, args...)
	p.waitFor(t, "a poll cycle", func(st map[string]any) bool { return strings.Contains(p.stderr.String(), `msg="poll cycle"`) })
	if !strings.Contains(p.stderr.String(), "targets=0") {
		t.Errorf("the daemon started with targets:\n%s", p.stderr)
	}
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit: %v\n%s", err, p.stderr)
	}
}

// protoAddr waits for the daemon to log the address its protocol socket
// listens on.
func protoAddr(t *testing.T, p *daemonProc) string {
	t.Helper()
	re := regexp.MustCompile(`msg="rrdcached protocol listening" .*addr=(\S+)`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := re.FindStringSubmatch(p.stderr.String()); m != nil {
			return m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no protocol address logged:\n%s", p.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRRDCachedDebianLine: spoold rrdcached with Debian's line serves
// rrdtool --daemon on the socket the line names, and LibreNMS's commands.
func TestRRDCachedDebianLine(t *testing.T) {
	requireRRDTool(t)
	dir := t.TempDir()
	opts := debianOpts(t, dir)
	base := filepath.Join(dir, "var/lib/rrdcached/db")
	os.MkdirAll(base, 0o755)
	os.MkdirAll(filepath.Join(dir, "var/run"), 0o755)
	p := startDaemon(t, append(append([]string{"rrdcached", "-g"}, opts...), "--", "--admin-listen", "127.0.0.1:0")...)
	addr := "unix:" + protoAddr(t, p)
	if want := "unix:" + filepath.Join(dir, "var/run/rrdcached.sock"); addr != want {
		t.Fatalf("listens on %s, want %s", addr, want)
	}
	checkUpdateFetch(t, addr, base)
	runLibreNMS(t, addr, base)
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit: %v\n%s", err, p.stderr)
	}
}

// TestRRDCachedLibreNMSLine: the line LibreNMS's docs recommend, on a
// loopback port: TCP accepts updates as rrdcached's does without -P, and
// -R lets CREATE make a host's directory.
func TestRRDCachedLibreNMSLine(t *testing.T) {
	requireRRDTool(t)
	dir := t.TempDir()
	base := filepath.Join(dir, "rrd")
	os.MkdirAll(base, 0o755)
	p := startDaemon(t, "rrdcached", "-g", "-l", "127.0.0.1:0", "-j", filepath.Join(dir, "journal")+"/", "-F", "-b", base,
		"-B", "-R", "-t", "4", "-w", "1800", "-z", "1800", "-f", "3600", "--", "--admin-listen", "127.0.0.1:0")
	addr := protoAddr(t, p)
	checkUpdateFetch(t, addr, base)
	rrdtoolOut(t, "create", "newhost/port-id2.rrd", "--daemon", addr, "--step", "300", "DS:INOCTETS:DERIVE:600:0:U", "RRA:AVERAGE:0.5:1:10")
	if _, err := os.Stat(filepath.Join(base, "newhost/port-id2.rrd")); err != nil {
		t.Errorf("CREATE in a new host directory with -R: %v", err)
	}
	runLibreNMS(t, addr, base)
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit: %v\n%s", err, p.stderr)
	}
}

// checkUpdateFetch creates a file through the daemon at addr, updates it,
// and reads the value back with rrdtool fetch --daemon.
func checkUpdateFetch(t *testing.T, addr, base string) {
	t.Helper()
	now := time.Now().Unix() / 10 * 10
	// rrdtool makes a name absolute from its own directory on a unix
	// socket, and refuses an absolute one on TCP.
	file := "x.rrd"
	if strings.HasPrefix(addr, "unix:") {
		file = filepath.Join(base, file)
	}
	rrdtoolOut(t, "create", file, "--daemon", addr, "-b", strconv.FormatInt(now-30, 10), "-s", "10", "DS:a:GAUGE:20:U:U", "RRA:LAST:0.5:1:100")
	rrdtoolOut(t, "update", file, "--daemon", addr, strconv.FormatInt(now-20, 10)+":5", strconv.FormatInt(now-10, 10)+":7")
	out := rrdtoolOut(t, "fetch", file, "LAST", "--daemon", addr, "-s", strconv.FormatInt(now-30, 10), "-e", strconv.FormatInt(now-10, 10))
	if !strings.Contains(out, strconv.FormatInt(now-20, 10)+": 5.0000000000e+00") || !strings.Contains(out, strconv.FormatInt(now-10, 10)+": 7.0000000000e+00") {
		t.Errorf("rrdtool fetch --daemon %s: %s\nwant 5 at %d and 7 at %d", addr, out, now-20, now-10)
	}
	if _, err := os.Stat(filepath.Join(base, "x.rrd")); err != nil {
		t.Errorf("the file is not in -b's directory: %v", err)
	}
}

// TestLogLinesNameTheirComponent: every line of a daemon's start, SIGUSR1
// flush and stop names its component, and none says err=<nil>.
func TestLogLinesNameTheirComponent(t *testing.T) {
	r := newProtoRig(t)
	p := r.start(t)
	p.cmd.Process.Signal(syscall.SIGUSR1)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(p.stderr.String(), `msg=flushed`) {
		if time.Now().After(deadline) {
			t.Fatalf("no flush logged after SIGUSR1:\n%s", p.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit: %v\n%s", err, p.stderr)
	}
	<-p.logged
	for _, l := range strings.Split(strings.TrimSpace(p.stderr.String()), "\n") {
		if !strings.Contains(l, " component=") || strings.Contains(l, "=<nil>") {
			t.Errorf("log line without its component, or with a nil error: %s", l)
		}
	}
}
