package main

import (
	"bufio"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/rrdctest"
	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/rrdcached"
)

// collectd, Debian's collectd-core, writing through its rrdcached plugin
// into a server of rrdcached's protocol: Debian's rrdcached (the peer
// collectd's users run) and spoold. collectd is fed by its unixsock plugin
// (PUTVAL with explicit times), so the test knows every value and its time;
// what landed in the RRD files is read with rrdtool fetch, without --daemon.

// collectdHost is the host name of the values the test dispatches.
const collectdHost = "collectdtest"

// collectdPeer is the rrdcached-protocol server collectd writes to.
type collectdPeer struct {
	addr    string                  // collectd's DaemonAddress, unix:PATH
	dataDir string                  // collectd's DataDir, inside the server's RRD directory
	updates func() (float64, error) // the updates the server counts as received
}

// collectdProc is a collectd process of a test, in the foreground (-f).
type collectdProc struct {
	cmd    *exec.Cmd
	sock   string // its unixsock plugin's socket
	log    string // its logfile plugin's file
	exited chan error
}

// startCollectd runs `collectd -f -C conf` with the unixsock plugin as its
// only source and the rrdcached plugin writing to peer (CreateFiles true,
// Interval 1 s, one write thread so that the values of a file reach the
// server in the order they were dispatched); it returns when the unixsock
// socket answers. The process is stopped when the test ends.
func startCollectd(t *testing.T, peer collectdPeer) *collectdProc {
	t.Helper()
	bin := testenv.LookPath(t, "collectd", "collectd's rrdcached plugin is a client spoold serves (Debian package collectd-core)")
	const typesDB = "/usr/share/collectd/types.db"
	if _, err := os.Stat(typesDB); err != nil {
		testenv.Missing(t, "collectd's %s (Debian package collectd-core): %v", typesDB, err)
	}
	dir, err := os.MkdirTemp("", "collectd") // short: a socket path has at most 107 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c := &collectdProc{sock: filepath.Join(dir, "sock"), log: filepath.Join(dir, "log"), exited: make(chan error, 1)}
	g, err := user.LookupGroupId(strconv.Itoa(os.Getgid())) // the unixsock plugin's group, "collectd" by default
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "collectd.conf")
	if err := os.WriteFile(conf, []byte(collectdConf(dir, c, peer, typesDB, g.Name)), 0o644); err != nil {
		t.Fatal(err)
	}
	c.cmd = exec.Command(bin, "-f", "-C", conf)
	out, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	c.cmd.Stdout, c.cmd.Stderr = out, out
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("start collectd: %v", err)
	}
	go func() { c.exited <- c.cmd.Wait() }()
	t.Cleanup(func() { c.stop(t) })
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := net.Dial("unix", c.sock)
		if err == nil {
			conn.Close()
			return c
		}
		select {
		case err := <-c.exited:
			c.exited <- err
			t.Fatalf("collectd exited before its unixsock socket answered: %v\n%s", err, c.output(dir))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("collectd's unixsock socket %s does not answer within 20 s: %v\n%s", c.sock, err, c.output(dir))
		}
	}
}

// collectdConf is the configuration startCollectd runs: the rrdcached
// plugin block is the one docs/rrdcached.md shows.
func collectdConf(dir string, c *collectdProc, peer collectdPeer, typesDB, group string) string {
	return fmt.Sprintf(`Hostname %q
FQDNLookup false
BaseDir %q
PIDFile %q
TypesDB %q
Interval 1
WriteThreads 1
AutoLoadPlugin false

LoadPlugin logfile
<Plugin logfile>
  LogLevel info
  File %q
  Timestamp true
  PrintSeverity true
</Plugin>

LoadPlugin unixsock
<Plugin unixsock>
  SocketFile %q
  SocketGroup %q
  SocketPerms "0600"
  DeleteSocket true
</Plugin>

LoadPlugin rrdcached
<Plugin rrdcached>
  DaemonAddress %q
  DataDir %q
  CreateFiles true
  CreateFilesAsync false
  CollectStatistics false
</Plugin>
`, collectdHost, dir, filepath.Join(dir, "pid"), typesDB, c.log, c.sock, group, peer.addr, peer.dataDir)
}

func (c *collectdProc) output(dir string) string {
	out, _ := os.ReadFile(filepath.Join(dir, "stdout"))
	log, _ := os.ReadFile(c.log)
	return string(out) + string(log)
}

// stop ends collectd with SIGTERM and waits for it (a no-op when it has
// exited).
func (c *collectdProc) stop(t *testing.T) {
	select {
	case err := <-c.exited:
		c.exited <- err
		return
	default:
	}
	c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-c.exited:
		c.exited <- err
	case <-time.After(30 * time.Second):
		c.cmd.Process.Kill()
		t.Errorf("collectd did not end within 30 s of SIGTERM")
	}
}

// putval dispatches each line ("IDENT interval=1 TIME:VALUES") through the
// unixsock plugin, failing the test unless collectd accepts each.
func (c *collectdProc) putval(t *testing.T, lines []string) {
	t.Helper()
	conn, err := net.Dial("unix", c.sock)
	if err != nil {
		t.Fatalf("dial collectd's unixsock %s: %v", c.sock, err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	for _, l := range lines {
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := fmt.Fprintf(conn, "PUTVAL %s\n", l); err != nil {
			t.Fatalf("PUTVAL %s: %v", l, err)
		}
		rep, err := r.ReadString('\n')
		if err != nil || !strings.HasPrefix(rep, "0 ") {
			t.Fatalf("PUTVAL %s: collectd answers %q (%v)", l, rep, err)
		}
	}
}

// collectdBenign are collectd's log messages at level error that say
// nothing of the values: pthread_setname_np fails for the unixsock plugin's
// connection threads in some containers.
var collectdBenign = []string{`set_thread_name("unixsock conn")`}

// errors returns the lines of collectd's log at level error or warning,
// collectdBenign's aside.
func (c *collectdProc) errors() []string {
	b, _ := os.ReadFile(c.log)
	var bad []string
	for _, l := range strings.Split(string(b), "\n") {
		if slices.ContainsFunc(collectdBenign, func(s string) bool { return strings.Contains(l, s) }) {
			continue
		}
		if strings.Contains(l, "[error]") || strings.Contains(l, "[warning]") {
			bad = append(bad, l)
		}
	}
	return bad
}

// collectdValues is what the test dispatches: n seconds from t0 of a GAUGE
// (gauge-temp, 20 + 1.5 i: exact in collectd's "%f") and a two-source DERIVE
// (if_octets-eth0, rx = 1000 i and tx = 7 i², so the rates are 1000 and
// 7 (2i - 1) per second).
type collectdValues struct {
	t0 int64
	n  int
}

func (v collectdValues) gauge(i int) float64 { return 20 + 1.5*float64(i) }

func (v collectdValues) lines() []string {
	var out []string
	for i := range v.n {
		ts := v.t0 + int64(i)
		out = append(out,
			fmt.Sprintf("%s/e2e-a/gauge-temp interval=1 %d:%s", collectdHost, ts, strconv.FormatFloat(v.gauge(i), 'f', -1, 64)),
			fmt.Sprintf("%s/e2e-a/if_octets-eth0 interval=1 %d:%d:%d", collectdHost, ts, 1000*i, 7*i*i))
	}
	return out
}

// files are the RRD files collectd makes of the values, under dataDir.
func (v collectdValues) files(dataDir string) (gauge, octets string) {
	dir := filepath.Join(dataDir, collectdHost, "e2e-a")
	return filepath.Join(dir, "gauge-temp.rrd"), filepath.Join(dir, "if_octets-eth0.rrd")
}

// checkCollectdFiles reads both files with rrdtool fetch (no daemon) over
// [t0-5, t0+n+5]: each dispatched time holds its value (the DERIVE's first
// time has no rate, as librrd gives none), every other row is unknown, so
// no value is missing, moved or applied twice.
func (v collectdValues) check(t *testing.T, dataDir string) {
	t.Helper()
	gauge, octets := v.files(dataDir)
	start, end := v.t0-5, v.t0+int64(v.n)+5
	want := func(ts int64) (g, rx, tx float64) {
		i := int(ts - v.t0)
		g, rx, tx = math.NaN(), math.NaN(), math.NaN()
		if i >= 0 && i < v.n {
			g = v.gauge(i)
		}
		if i >= 1 && i < v.n {
			rx, tx = 1000, float64(7*(2*i-1))
		}
		return g, rx, tx
	}
	same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
	_, grows := fetchRows(t, gauge, 1, start, end)
	ocols, orows := fetchRows(t, octets, 1, start, end)
	if strings.Join(ocols, " ") != "rx tx" {
		t.Fatalf("%s has data sources %q, want rx tx (collectd's types.db)", octets, ocols)
	}
	bad := 0
	for ts := start + 1; ts <= end; ts++ {
		g, rx, tx := want(ts)
		gr, ok1 := grows[ts]
		or, ok2 := orows[ts]
		if !ok1 || !ok2 {
			t.Fatalf("rrdtool fetch has no row %d (gauge %v, if_octets %v)", ts, ok1, ok2)
		}
		if !same(gr[0], g) || !same(or[0], rx) || !same(or[1], tx) {
			bad++
			t.Errorf("row %d: gauge %v, rx %v, tx %v; collectd sent gauge %v, rates rx %v, tx %v", ts, gr[0], or[0], or[1], g, rx, tx)
		}
	}
	if bad == 0 {
		t.Logf("%d values of each file in the RRD files, each at its time, nothing else", v.n)
	}
}

// runCollectd dispatches the values through collectd into peer and checks
// them: collectd creates both files under the data directory, the server
// counts exactly 2n updates (nothing lost, nothing twice), collectd logs no
// error, and after flush (rrdtool flushcached --daemon, the tools' own
// client) the files hold every value once.
func runCollectd(t *testing.T, peer collectdPeer, flush func(v collectdValues, files ...string)) {
	requireRRDTool(t)
	c := startCollectd(t, peer)
	v := collectdValues{t0: time.Now().Unix() - 300, n: 60}
	c.putval(t, v.lines())
	wantUpdates := float64(2 * v.n)
	deadline := time.Now().Add(60 * time.Second)
	for {
		n, err := peer.updates()
		if err != nil {
			t.Fatalf("the server's count of updates: %v", err)
		}
		if n >= wantUpdates {
			if n != wantUpdates {
				t.Errorf("the server counts %v updates, collectd was given %v", n, wantUpdates)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server counts %v updates after 60 s, collectd was given %v; collectd's log:\n%s", n, wantUpdates, strings.Join(c.errors(), "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	gauge, octets := v.files(peer.dataDir)
	for _, f := range []string{gauge, octets} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("collectd's RRD file: %v", err)
		}
	}
	flush(v, gauge, octets)
	v.check(t, peer.dataDir)
	c.stop(t)
	if bad := c.errors(); len(bad) > 0 {
		t.Errorf("collectd logged errors or warnings:\n%s", strings.Join(bad, "\n"))
	}
}

// flushcached flushes files with `rrdtool flushcached --daemon addr`.
func flushcached(t *testing.T, addr string) func(v collectdValues, files ...string) {
	return func(_ collectdValues, files ...string) {
		t.Helper()
		rrdtoolOut(t, append([]string{"flushcached", "--daemon", addr}, files...)...)
	}
}

// TestCollectdThroughRRDCached: collectd's rrdcached plugin writing to
// Debian's rrdcached, the harness's reference run: the same checks as
// through spoold, with rrdcached's STATS UpdatesReceived as the count.
func TestCollectdThroughRRDCached(t *testing.T) {
	s := rrdctest.StartServer(t, "")
	peer := collectdPeer{addr: s.Address(), dataDir: filepath.Join(s.Dir, "collectd"),
		updates: func() (float64, error) { return statsValue(s.Sock, "UpdatesReceived") }}
	runCollectd(t, peer, flushcached(t, s.Address()))
}

// statsValue asks the server on the unix socket sock for STATS and returns
// the counter name.
func statsValue(sock, name string) (float64, error) {
	c, err := net.DialTimeout("unix", sock, 5*time.Second)
	if err != nil {
		return 0, fmt.Errorf("dial %s: %w", sock, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("STATS\n")); err != nil {
		return 0, fmt.Errorf("send STATS to %s: %w", sock, err)
	}
	rep, err := rrdcached.ReadReply(bufio.NewReader(c))
	if err != nil {
		return 0, fmt.Errorf("read STATS of %s: %w", sock, err)
	}
	for _, l := range rep.Lines {
		if k, v, ok := strings.Cut(l, ": "); ok && k == name {
			return strconv.ParseFloat(v, 64)
		}
	}
	return 0, fmt.Errorf("STATS of %s has no %s: %q", sock, name, rep.Lines)
}

// TestCollectdThroughSpoold: collectd's rrdcached plugin writing into
// spoold's --listen socket, with the data directory inside --rrd-dir (the
// plugin sends absolute paths, librrd's client resolves them). spoold
// counts exactly the updates collectd was given
// (spoold_rrdcached_update_commands_total and _updates_spooled_total: one
// value per UPDATE), lists them all with PENDING, and writes nothing before
// the flush (--write-delay 1h); the values reach the files at a FLUSH (rrdtool
// flushcached --daemon, the writer's entries counted) and at spoold's stop
// (SIGTERM writes what is pending).
func TestCollectdThroughSpoold(t *testing.T) {
	for _, how := range []string{"flushcached", "stop"} {
		t.Run(how, func(t *testing.T) {
			r := newProtoRig(t)
			p := r.start(t, "--write-delay", "1h")
			metric := func(name string) float64 {
				m, err := parseMetrics(string(get(t, p.admin+"/metrics")))
				if err != nil {
					t.Fatal(err)
				}
				return m[name]
			}
			peer := collectdPeer{addr: "unix:" + r.sock, dataDir: r.rrd("collectd"),
				updates: func() (float64, error) { return metric("spoold_rrdcached_updates_spooled_total"), nil }}
			flush := func(v collectdValues, files ...string) {
				if n := fileValues(t, files); n != 0 {
					t.Errorf("%d values in the files before the flush, with --write-delay 1h", n)
				}
				checkPending(t, r.sock, files[0], v)
				commands, spooled := metric("spoold_rrdcached_update_commands_total"), metric("spoold_rrdcached_updates_spooled_total")
				if commands != spooled {
					t.Errorf("spoold counts %v UPDATE commands and %v updates spooled; collectd sends one value per UPDATE", commands, spooled)
				}
				checkCollectdCommands(t, metric)
				if how == "stop" {
					if err := p.stop(t, syscall.SIGTERM); err != nil {
						t.Fatalf("spoold's stop: %v\n%s", err, p.stderr)
					}
					return
				}
				before := metric("spoold_writer_entries_written_total")
				flushcached(t, peer.addr)(v, files...)
				// The counter follows the write, not the FLUSH's reply.
				deadline := time.Now().Add(30 * time.Second)
				for metric("spoold_writer_entries_written_total")-before < spooled {
					if time.Now().After(deadline) {
						t.Fatalf("the writer counts %v entries written since the flush, %v updates spooled", metric("spoold_writer_entries_written_total")-before, spooled)
					}
					time.Sleep(20 * time.Millisecond)
				}
				if got := metric("spoold_writer_entries_written_total") - before; got != spooled {
					t.Errorf("the flush wrote %v entries, %v updates spooled", got, spooled)
				}
			}
			runCollectd(t, peer, flush)
		})
	}
}

// TestCollectdThroughSpooldRRDCached: collectd's rrdcached plugin writing
// into `spoold rrdcached` started with Debian's rrdcached line (the socket,
// base and journal directories it names, rrdcached's -w 300), the data
// directory inside the base directory as -B wants: spoold's STATS counts
// exactly the updates collectd was given, and after rrdtool flushcached
// --daemon the files hold every value once, each at its time.
func TestCollectdThroughSpooldRRDCached(t *testing.T) {
	requireRRDTool(t)
	dir := t.TempDir()
	opts := debianOpts(t, dir)
	base := filepath.Join(dir, "var/lib/rrdcached/db")
	for _, d := range []string{base, filepath.Join(dir, "var/run")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := startDaemon(t, append(append([]string{"rrdcached", "-g"}, opts...), "--", "--admin-listen", "127.0.0.1:0")...)
	sock := protoAddr(t, p)
	peer := collectdPeer{addr: "unix:" + sock, dataDir: filepath.Join(base, "collectd"),
		updates: func() (float64, error) { return statsValue(sock, "UpdatesReceived") }}
	runCollectd(t, peer, flushcached(t, peer.addr))
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("spoold rrdcached's stop: %v\n%s", err, p.stderr)
	}
}

// checkCollectdCommands: every UPDATE collectd sent was accepted, and the
// only errors are librrd's FORGETs: collectd makes each file itself with
// librrd's rrd_create, which, when its client is connected (from the
// plugin's first write on), sends FORGET of the new file before and after
// its rename and ignores the answer. The file is not cached, so spoold
// answers "-1 No such file or directory", as rrdcached does
// (rrdctest.Script has the lines): two errors for the second file, none
// for the first, made before the plugin connects.
func checkCollectdCommands(t *testing.T, metric func(string) float64) {
	t.Helper()
	count := func(command, result string) float64 {
		return metric(fmt.Sprintf(`spoold_rrdcached_commands_total{command=%q,result=%q}`, command, result))
	}
	if n := count("UPDATE", "error"); n != 0 {
		t.Errorf("%v of collectd's UPDATEs refused", n)
	}
	if n, ok := count("FORGET", "error"), count("FORGET", "ok"); n != 2 || ok != 0 {
		t.Errorf("FORGET: %v errors, %v ok; want librrd's 2 FORGETs of the second new file, both not cached", n, ok)
	}
	for _, c := range []string{"FLUSH", "FLUSHALL", "PENDING", "unknown"} {
		if n := count(c, "error"); n != 0 {
			t.Errorf("%v %s errors", n, c)
		}
	}
}

// checkPending: PENDING of the gauge file (its absolute name, as collectd
// sends it) lists every value collectd sent, in order, each once (collectd
// writes "%f"; PENDING shows the shortest form of the same number).
func checkPending(t *testing.T, sock, gauge string, v collectdValues) {
	t.Helper()
	c, err := dialProto(sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	rep, err := c.do("PENDING " + gauge)
	if err != nil || !rep.OK() {
		t.Fatalf("PENDING %s: %v %v", gauge, rep, err)
	}
	var want []string
	for i := range v.n {
		want = append(want, fmt.Sprintf("%d:%s", v.t0+int64(i), strconv.FormatFloat(v.gauge(i), 'f', -1, 64)))
	}
	if strings.Join(rep.Lines, " ") != strings.Join(want, " ") {
		t.Errorf("PENDING %s lists %q, collectd sent %q", gauge, rep.Lines, want)
	}
}

// fileValues counts the known values in the files' rows of the last hour
// (rrdtool fetch, no daemon).
func fileValues(t *testing.T, files []string) int {
	n := 0
	now := time.Now().Unix()
	for _, f := range files {
		_, rows := fetchRows(t, f, 1, now-3600, now)
		for _, vals := range rows {
			for _, v := range vals {
				if !math.IsNaN(v) {
					n++
				}
			}
		}
	}
	return n
}
