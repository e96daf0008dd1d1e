package rrdcached_test

import (
	"context"
	"encoding/binary"
	"io"
	"log/slog"
	"math"
	"math/rand"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/rrdctest"
	"github.com/spoold/spoold/rrdcached"
)

func at(offset int) string { return strconv.Itoa(rrdctest.Begin + offset) }

// seedFetch gives a.rrd two data sources and three rows, with librrd's
// NaN, a positive NaN and an infinity among them.
func seedFetch(b *memBackend) {
	b.fetch["a.rrd"] = rrdcached.FetchResult{
		Start: time.Unix(rrdctest.Begin, 0), End: time.Unix(rrdctest.Begin+30, 0), Step: 10 * time.Second,
		DS:   []string{"x", "y"},
		Rows: [][]float64{{1, nan}, {0.5, math.NaN()}, {math.Inf(-1), 1e300}},
	}
	b.info["a.rrd"] = []rrdcached.InfoValue{{Key: "filename", Type: 2, Value: b.abs("a.rrd")}, {Key: "step", Type: 1, Value: "10"}}
}

func TestFetch(t *testing.T) {
	s := startServer(t, nil)
	seedFetch(s.backend)
	c := s.dial(t, 0)
	rows := []string{
		"1700000010: 1.00000000000000000e+00 -nan",
		"1700000020: 5.00000000000000000e-01 nan",
		"1700000030: -inf 1.00000000000000005e+300",
	}
	head := []string{"FlushVersion: 1", "Start: 1700000000", "End: 1700000030", "Step: 10"}
	want := rrdcached.Reply{Status: 9, Message: "Success", Lines: append(append(head, "DSCount: 2", "DSName: x y"), rows...)}
	if got := c.do("FETCH a.rrd AVERAGE " + at(0) + " " + at(30)); !reflect.DeepEqual(got, want) {
		t.Errorf("FETCH:\n got %q\nwant %q", got, want)
	}
	want = rrdcached.Reply{Status: 9, Message: "Success", Lines: append(append(head, "DSCount: 2", "DSName: y x"),
		"1700000010: -nan 1.00000000000000000e+00", "1700000020: nan 5.00000000000000000e-01", "1700000030: 1.00000000000000005e+300 -inf")}
	if got := c.do("FETCH a.rrd AVERAGE " + at(0) + " " + at(30) + " y  x"); !reflect.DeepEqual(got, want) {
		t.Errorf("FETCH y x:\n got %q\nwant %q", got, want)
	}
	for line, msg := range map[string]string{
		"FETCH a.rrd AVERAGE 1 2 x x":   "field x already used",
		"FETCH a.rrd AVERAGE 1 2 x y x": "too many fields given - duplicates!",
		"FETCH a.rrd AVERAGE 1 2 z":     "field z not found in " + s.dir + "/a.rrd",
		"FETCH a.rrd MAX":               "rrd_fetch_r failed: unknown consolidation function 'MAX'",
		"FETCH a.rrd AVERAGE -":         "Cannot parse start time `-': Only simple integers are allowed.",
	} {
		if got := c.do(line); got.Status != -1 || got.Message != msg {
			t.Errorf("%s: %q, want -1 %s", line, got, msg)
		}
	}

	// FETCHBIN: the text lines, then per column its doubles and "\n".
	c.send("FETCHBIN a.rrd AVERAGE " + at(0) + " " + at(30) + " y")
	c.SetDeadline(time.Now().Add(10 * time.Second))
	text := []string{"6 Success", "FlushVersion: 1", "Start: 1700000000", "End: 1700000030", "Step: 10", "DSCount: 1", "DSName-y: BinaryData 3 8 LITTLE"}
	for _, w := range text {
		l, err := c.r.ReadString('\n')
		if err != nil || l != w+"\n" {
			t.Fatalf("FETCHBIN line %q, %v; want %q", l, err, w)
		}
	}
	bin := make([]byte, 3*8+1)
	if _, err := io.ReadFull(c.r, bin); err != nil {
		t.Fatal(err)
	}
	for i, w := range []float64{nan, math.NaN(), 1e300} {
		if got := math.Float64frombits(binary.LittleEndian.Uint64(bin[8*i:])); math.Float64bits(got) != math.Float64bits(w) {
			t.Errorf("FETCHBIN value %d = %v, want %v", i, got, w)
		}
	}
	if bin[24] != '\n' {
		t.Errorf("FETCHBIN: no newline after the doubles")
	}
	if got := c.do("PING"); got.Message != "PONG" {
		t.Errorf("PING after FETCHBIN: %q", got)
	}
}

func TestInfoQueueForgetStats(t *testing.T) {
	s := startServer(t, nil)
	seedFetch(s.backend)
	c := s.dial(t, 0)
	want := rrdcached.Reply{Status: 2, Message: "Info for " + s.dir + "/a.rrd follows", Lines: []string{"filename 2 " + s.dir + "/a.rrd", "step 1 10"}}
	if got := c.do("INFO a.rrd"); !reflect.DeepEqual(got, want) {
		t.Errorf("INFO: %q, want %q", got, want)
	}
	c.do("UPDATE a.rrd " + at(10) + ":1:2 " + at(20) + ":3:4")
	want = rrdcached.Reply{Status: 1, Message: "in queue.", Lines: []string{"2 " + s.dir + "/a.rrd"}}
	if got := c.do("QUEUE"); !reflect.DeepEqual(got, want) {
		t.Errorf("QUEUE: %q, want %q", got, want)
	}
	// spoold keeps what FORGET would drop, and says so.
	if got := c.do("FORGET a.rrd"); got.Status != 0 || got.Message != "Gone! (2 acknowledged update(s) kept: spoold still writes them)" {
		t.Errorf("FORGET with 2 pending: %q", got)
	}
	if got := c.do("LAST a.rrd"); got.Message != at(20) {
		t.Errorf("LAST after FORGET: %q, want the kept updates written (%s)", got, at(20))
	}
	got := c.do("STATS")
	if got.Status != 9 || got.Message != "Statistics follow" || got.Lines[1] != "UpdatesReceived: 1" {
		t.Errorf("STATS: %q", got)
	}
	if n := s.metric(t, "spoold_rrdcached_commands_total", "command", "UPDATE", "result", "ok"); n != 1 {
		t.Errorf("commands_total{UPDATE,ok} = %v, want 1", n)
	}
}

// TestTCPReadOnlyByDefault: a TCP listener without a permission list
// takes only read commands.
func TestTCPReadOnlyByDefault(t *testing.T) {
	specs := []rrdcached.ListenerOptions{{Spec: "tcp:127.0.0.1:0"}}
	if l, err := net.Listen("tcp", "[::1]:0"); err == nil {
		l.Close()
		specs = append(specs, rrdcached.ListenerOptions{Spec: "tcp:[::1]:0"})
	}
	s := startServer(t, func(o *rrdcached.Options) { o.Listeners = specs })
	seedFetch(s.backend)
	for i, l := range specs {
		c := s.dial(t, i)
		for _, line := range []string{"UPDATE a.rrd " + at(10) + ":1:2", "CREATE x.rrd DS:x:GAUGE:20:U:U RRA:AVERAGE:0.5:1:10", "FORGET a.rrd", "BATCH", "FLUSHALL", "SUSPENDALL"} {
			if got := c.do(line); got.Status != -1 || got.Message != "Permission denied." {
				t.Errorf("%s: %s: %q, want Permission denied.", l.Spec, line, got)
			}
		}
		for _, line := range []string{"PING", "FETCH a.rrd AVERAGE " + at(0) + " " + at(30), "INFO a.rrd", "LAST a.rrd", "STATS", "FLUSH a.rrd", "LIST /", "HELP"} {
			if got := c.do(line); !got.OK() {
				t.Errorf("%s: %s: %q, want it allowed", l.Spec, line, got)
			}
		}
		if n := s.metric(t, "spoold_rrdcached_refusals_total", "reason", "permission", "listener", l.Spec); n != 6 {
			t.Errorf("%s: permission refusals %v, want 6", l.Spec, n)
		}
	}
	if u := s.backend.updatesSeen(); len(u) != 0 {
		t.Errorf("the backend was given updates through a read-only listener: %v", u)
	}
}

func TestLineTooLong(t *testing.T) {
	s := startServer(t, func(o *rrdcached.Options) { o.MaxLine = 100 })
	other := s.dial(t, 0)
	c := s.dial(t, 0)
	long := "UPDATE a.rrd " + at(10) + ":" + strings.Repeat("1", 100-len("UPDATE a.rrd "+at(10)+":"))
	if got := c.do(long); got.Message != "errors, enqueued 1 value(s)." {
		t.Fatalf("a line of MaxLine bytes: %q", got)
	}
	if got := c.do(long + "1"); got.Status != -1 || got.Message != "Line too long: more than 100 bytes." {
		t.Errorf("a line over MaxLine: %q", got)
	}
	if !c.closed() {
		t.Errorf("connection still open after a line over MaxLine")
	}
	c = s.dial(t, 0)
	c.send(strings.Repeat("x", 10000)) // far over, with no newline for a while
	if got := c.reply(); got.Message != "Line too long: more than 100 bytes." || !c.closed() {
		t.Errorf("10000 bytes: %q", got)
	}
	if got := other.do("PING"); got.Message != "PONG" {
		t.Errorf("another client: %q", got)
	}
	if n := s.metric(t, "spoold_rrdcached_refusals_total", "reason", "line_too_long"); n != 2 {
		t.Errorf("line_too_long refusals %v, want 2", n)
	}
}

func TestBatch(t *testing.T) {
	s := startServer(t, func(o *rrdcached.Options) { o.MaxBatch = 4 })
	c := s.dial(t, 0)
	if got := c.do("BATCH"); got.Message != "Go ahead.  End with dot '.' on its own line." {
		t.Fatalf("BATCH: %q", got)
	}
	c.send("UPDATE a.rrd "+at(10)+":1:2", "UPDATE nope.rrd "+at(10)+":1:2", "PING", "UPDATE a.rrd "+at(20)+":1:2")
	want := rrdcached.Reply{Status: 2, Message: "errors", Lines: []string{"2 No such file: " + s.dir + "/nope.rrd", "3 Can't use 'PING' here."}}
	if got := c.do("."); !reflect.DeepEqual(got, want) {
		t.Errorf("batch answer %q, want %q", got, want)
	}
	if p := c.do("PENDING a.rrd"); !reflect.DeepEqual(p.Lines, []string{at(10) + ":1:2", at(20) + ":1:2"}) {
		t.Errorf("pending after the batch: %q", p)
	}
	if n := s.metric(t, "spoold_rrdcached_batch_commands"); n != 1 {
		t.Errorf("batch_commands observations %v, want 1", n)
	}

	c.do("BATCH")
	c.send("UPDATE a.rrd "+at(30)+":1:2", "PING", "PING", "PING")
	if got := c.do("UPDATE a.rrd " + at(40) + ":1:2"); got.Message != "Batch too large: more than 4 commands." {
		t.Errorf("a fifth command in a BATCH of at most 4: %q", got)
	}
	if !c.closed() {
		t.Errorf("connection open after a batch over MaxBatch")
	}
	if p := s.dial(t, 0).do("PENDING a.rrd"); len(p.Lines) != 3 {
		t.Errorf("the commands before the limit were not carried out, or the one over it was: %q", p)
	}
	if n := s.metric(t, "spoold_rrdcached_refusals_total", "reason", "batch_too_large"); n != 1 {
		t.Errorf("batch_too_large refusals %v, want 1", n)
	}
}

func TestMaxConns(t *testing.T) {
	dir := t.TempDir()
	s := startServer(t, func(o *rrdcached.Options) {
		o.MaxConns = 3
		o.Listeners = []rrdcached.ListenerOptions{
			{Spec: "unix:" + filepath.Join(dir, "one"), MaxConns: 1},
			{Spec: "unix:" + filepath.Join(dir, "two")},
		}
	})
	first := s.dial(t, 0)
	first.do("PING")
	if got := s.dial(t, 0).reply(); got.Message != "Too many connections: the limit of 1 on this socket is reached." {
		t.Errorf("second connection on a listener of 1: %q", got)
	}
	a, b := s.dial(t, 1), s.dial(t, 1)
	a.do("PING")
	b.do("PING")
	over := s.dial(t, 1)
	if got := over.reply(); got.Message != "Too many connections: the server's limit of 3 is reached." || !over.closed() {
		t.Errorf("fourth connection of a server of 3: %q", got)
	}
	if got := first.do("PING"); got.Message != "PONG" {
		t.Errorf("a connection within the limits: %q", got)
	}
	a.Close()
	waitFor(t, "the closed connection released", func() bool {
		return s.metric(t, "spoold_rrdcached_open_connections", "listener", "unix:"+filepath.Join(dir, "two")) == 1
	})
	if got := s.dial(t, 1).do("PING"); got.Message != "PONG" {
		t.Errorf("a connection after one closed: %q", got)
	}
	for reason, want := range map[string]float64{"max_listener_connections": 1, "max_connections": 1} {
		if n := s.metric(t, "spoold_rrdcached_refusals_total", "reason", reason); n != want {
			t.Errorf("%s refusals %v, want %v", reason, n, want)
		}
	}
}

func TestIdleTimeout(t *testing.T) {
	s := startServer(t, func(o *rrdcached.Options) { o.IdleTimeout = 200 * time.Millisecond })
	silent := s.dial(t, 0)
	slow := s.dial(t, 0)
	// A client that sends a byte now and then but never a whole line.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				if _, err := slow.Write([]byte("P")); err != nil {
					return
				}
			}
		}
	}()
	if !silent.closed() || !slow.closed() {
		t.Fatalf("idle connections not closed")
	}
	if n := s.metric(t, "spoold_rrdcached_refusals_total", "reason", "idle_timeout"); n != 2 {
		t.Errorf("idle_timeout refusals %v, want 2", n)
	}
}

// TestSlowReader: a client that sends commands and never reads is cut
// off at WriteTimeout, and the server can still close.
func TestSlowReader(t *testing.T) {
	s := startServer(t, func(o *rrdcached.Options) { o.WriteTimeout = 200 * time.Millisecond })
	c := s.dial(t, 0)
	written := make(chan error, 1)
	go func() {
		help := []byte(strings.Repeat("HELP\n", 1000))
		for {
			c.SetWriteDeadline(time.Now().Add(20 * time.Second))
			if _, err := c.Write(help); err != nil {
				written <- err
				return
			}
		}
	}()
	waitFor(t, "a write_timeout refusal", func() bool {
		return s.metric(t, "spoold_rrdcached_refusals_total", "reason", "write_timeout") == 1
	})
	if err := <-written; err == nil {
		t.Errorf("the client could go on writing")
	}
	if got := s.dial(t, 0).do("PING"); got.Message != "PONG" {
		t.Errorf("another client: %q", got)
	}
}

func TestHostileClients(t *testing.T) {
	s := startServer(t, nil)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.rrd"), []byte("secret"), 0o644)
	if err := os.Symlink(filepath.Join(outside, "secret.rrd"), filepath.Join(s.dir, "out.rrd")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(s.dir, "outdir")); err != nil {
		t.Fatal(err)
	}

	t.Run("path escapes", func(t *testing.T) {
		c := s.dial(t, 0)
		for _, name := range []string{"../x.rrd", "/etc/passwd", "out.rrd", "outdir/secret.rrd", "sub/../../x.rrd", `a.rrd\` + "\x00", s.dir + "/../x.rrd"} {
			for _, cmd := range []string{"UPDATE %s " + at(10) + ":1:2", "FLUSH %s", "INFO %s", "FETCH %s AVERAGE", "CREATE %s DS:x:GAUGE:20:U:U RRA:AVERAGE:0.5:1:10", "PENDING %s", "FORGET %s"} {
				line := strings.Replace(cmd, "%s", strings.ReplaceAll(name, " ", `\ `), 1)
				if got := c.do(line); got.Status != -1 || !strings.HasSuffix(got.Message, ": Permission denied") {
					t.Errorf("%q: %q, want Permission denied", line, got)
				}
			}
		}
		if got := c.do("LIST /outdir"); got.Message != "Cannot read: "+s.dir+"/outdir" {
			t.Errorf("LIST of a symlink out: %q", got)
		}
		if got := c.do("CREATE a.rrd -r ../x.rrd DS:x:GAUGE:20:U:U RRA:AVERAGE:0.5:1:10"); !strings.HasSuffix(got.Message, "/../x.rrd: Permission denied") {
			t.Errorf("CREATE -r ../x.rrd: %q", got)
		}
		if n := s.metric(t, "spoold_rrdcached_refusals_total", "reason", "path"); n != 7*7+2 {
			t.Errorf("path refusals %v, want %d", n, 7*7+2)
		}
		if b, _ := os.ReadFile(filepath.Join(outside, "secret.rrd")); string(b) != "secret" {
			t.Errorf("the file outside changed: %q", b)
		}
	})

	t.Run("NUL bytes", func(t *testing.T) {
		c := s.dial(t, 0)
		if got := c.do("PING\x00junk"); got.Message != "PONG" {
			t.Errorf("PING NUL junk: %q", got)
		}
		if got := c.do("UPDATE\x00a.rrd\x00" + at(100) + ":1:2"); got.Message != "errors, enqueued 1 value(s)." {
			t.Errorf("NUL as separator: %q", got)
		}
	})

	t.Run("binary garbage", func(t *testing.T) {
		rng := rand.New(rand.NewSource(1))
		for i := 0; i < 20; i++ {
			c := s.dial(t, 0)
			junk := make([]byte, 4096)
			rng.Read(junk)
			c.SetDeadline(time.Now().Add(10 * time.Second))
			c.Write(append(junk, '\n'))
			c.closeWrite()
			for {
				if _, err := c.r.ReadString('\n'); err != nil {
					break
				}
			}
		}
		if got := s.dial(t, 0).do("PING"); got.Message != "PONG" {
			t.Errorf("after garbage: %q", got)
		}
	})

	t.Run("half-sent batch", func(t *testing.T) {
		c := s.dial(t, 0)
		c.do("BATCH")
		c.send("UPDATE a.rrd "+at(200)+":1:2", "UPDATE a.rrd "+at(210)+":1:2")
		c.Write([]byte("UPDATE a.rrd " + at(220)))
		c.Close()
		waitFor(t, "the connection gone", func() bool { return s.metric(t, "spoold_rrdcached_open_connections") == 0 })
		if p := s.dial(t, 0).do("PENDING a.rrd"); !reflect.DeepEqual(p.Lines[len(p.Lines)-2:], []string{at(200) + ":1:2", at(210) + ":1:2"}) {
			t.Errorf("pending after a half-sent batch: %q", p)
		}
	})

	for _, f := range s.backend.updatesSeen() {
		if strings.HasPrefix(f, "/") || strings.Contains(f, "..") || strings.ContainsRune(f, 0) || strings.HasPrefix(f, "out") {
			t.Errorf("the backend was given %q", f)
		}
	}
}

func (c *client) closeWrite() {
	if uc, ok := c.Conn.(*net.UnixConn); ok {
		uc.CloseWrite()
	}
}

// TestThousandsOfIdleConnections: connections over the TCP listener's
// limit are refused, those within it time out, and a client on the unix
// socket is served throughout.
func TestThousandsOfIdleConnections(t *testing.T) {
	// The idle timeout outlasts the dials (well under a second, a few on
	// a loaded machine under -race): every connection is open when the
	// last is dialled.
	const limit, extra, idle = 1000, 500, 5 * time.Second
	s := startServer(t, func(o *rrdcached.Options) {
		o.IdleTimeout = idle
		o.MaxConns = 2 * limit
		o.Listeners = append(o.Listeners, rrdcached.ListenerOptions{Spec: "tcp:127.0.0.1:0", MaxConns: limit})
	})
	user := s.dial(t, 0)
	user.do("PING")
	addr := s.Addrs()[1].String()
	var conns []net.Conn
	began := time.Now()
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < limit+extra; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns = append(conns, c)
		if i%100 == 0 {
			if got := user.do("PING"); got.Message != "PONG" {
				t.Fatalf("unix client during the flood: %q", got)
			}
		}
	}
	if d := time.Since(began); d >= idle {
		t.Fatalf("the %d dials took %v, past the idle timeout of %v: the first connections timed out before the last was dialled", limit+extra, d, idle)
	}
	refused, timedOut := 0, 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(4 * idle))
		b := make([]byte, 128)
		n, _ := c.Read(b)
		switch {
		case strings.HasPrefix(string(b[:n]), "-1 Too many connections"):
			refused++
		case n == 0:
			timedOut++
		default:
			t.Fatalf("an idle connection got %q", b[:n])
		}
	}
	if refused != extra || timedOut != limit {
		t.Errorf("%d refused, %d timed out; want %d and %d", refused, timedOut, extra, limit)
	}
	if got := s.dial(t, 0).do("PING"); got.Message != "PONG" {
		t.Errorf("a unix client after the flood: %q", got)
	}
	if n := s.metric(t, "spoold_rrdcached_refusals_total", "reason", "idle_timeout"); n < limit {
		t.Errorf("idle_timeout refusals %v, want at least %d", n, limit)
	}
}

// TestClose: Close lets the command in flight finish and answer, ends an
// idle connection at once, and returns when every goroutine has ended
// (TestMain's goleak checks that).
func TestClose(t *testing.T) {
	s := startServer(t, nil)
	idle := s.dial(t, 0)
	busy := s.dial(t, 0)
	gate, entered := s.backend.hold()
	busy.send("UPDATE a.rrd " + at(10) + ":1:2")
	<-entered
	closed := make(chan error)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a command was in flight", err)
	default:
	}
	if !idle.closed() {
		t.Errorf("an idle connection is still open while closing")
	}
	close(gate)
	if got := busy.reply(); got.Message != "errors, enqueued 1 value(s)." {
		t.Errorf("the command in flight: %q", got)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close: %v", err)
	}
	if !busy.closed() {
		t.Errorf("connection open after Close")
	}
	if _, err := net.Dial("unix", s.Addrs()[0].String()); err == nil {
		t.Errorf("a connection accepted after Close")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestBrokenCommandWord: a command word ending in a lone backslash closes
// the connection without a reply, as rrdcached does, and is counted.
func TestBrokenCommandWord(t *testing.T) {
	s := startServer(t, nil)
	c := s.dial(t, 0)
	c.send(`PING\`)
	if !c.closed() {
		t.Errorf("connection open after a broken command word")
	}
	if n := s.metric(t, "spoold_rrdcached_refusals_total", "reason", "broken_command"); n != 1 {
		t.Errorf("broken_command refusals %v, want 1", n)
	}
}

// TestRefusalLogRate: refusals are logged at most once per LogInterval and
// reason, naming the peer, and the next line says how many were not.
func TestRefusalLogRate(t *testing.T) {
	logs := &logRecords{}
	dir := filepath.Join(t.TempDir(), "rrd")
	rrdctest.Prepare(t, dir)
	opts := rrdcached.DefaultOptions()
	opts.Dir, opts.LogInterval = dir, time.Hour
	opts.Listeners = []rrdcached.ListenerOptions{{Spec: "tcp:127.0.0.1:0"}}
	srv, err := rrdcached.New(opts, newMemBackend(dir), slog.New(logs), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	s := &testServer{Server: srv}
	c := s.dial(t, 0)
	for i := 0; i < 50; i++ {
		if got := c.do("UPDATE a.rrd " + at(10+i) + ":1:2"); got.Message != "Permission denied." {
			t.Fatalf("UPDATE on a read-only TCP listener: %q", got)
		}
	}
	lines := logs.all()
	if len(lines) != 1 || !strings.Contains(lines[0], "reason=permission") || !strings.Contains(lines[0], "peer="+c.LocalAddr().String()) {
		t.Errorf("50 refusals logged as %q; want one line naming reason and peer %s", lines, c.LocalAddr())
	}
}

// logRecords keeps the server's log records as "msg k=v ..." lines.
type logRecords struct {
	mu    sync.Mutex
	lines []string
}

func (h *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecords) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logRecords) WithGroup(string) slog.Handler            { return h }

func (h *logRecords) Handle(_ context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, line)
	return nil
}

func (h *logRecords) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.lines...)
}

// TestCloseGrace: a command still running after ShutdownGrace has its
// Backend call canceled; Close returns and the client hears why.
func TestCloseGrace(t *testing.T) {
	s := startServer(t, func(o *rrdcached.Options) { o.ShutdownGrace = 100 * time.Millisecond })
	c := s.dial(t, 0)
	_, entered := s.backend.hold()
	c.send("UPDATE a.rrd " + at(10) + ":1:2")
	<-entered
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if got := c.reply(); got.Status != -1 || got.Message != "RRD Error: context canceled" {
		t.Errorf("the canceled command: %q", got)
	}
	if !c.closed() {
		t.Errorf("connection open after Close")
	}
}
