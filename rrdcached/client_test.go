package rrdcached_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/rrdctest"
	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/rrdcached"
)

func TestParseAddress(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"unix:/run/rrdcached.sock", "unix:/run/rrdcached.sock", ""},
		{"/run/rrdcached.sock", "unix:/run/rrdcached.sock", ""},
		{"tcp:127.0.0.1:42217", "tcp:127.0.0.1:42217", ""},
		{"127.0.0.1:1234", "tcp:127.0.0.1:1234", ""},
		{"localhost", "tcp:localhost:42217", ""},
		{"tcp:[::1]:9", "tcp:[::1]:9", ""},
		{"[::1]", "tcp:[::1]:42217", ""},
		{"::1", "", "needs brackets"},
		{"::1:9", "", "needs brackets"},
		{"0]", "", "brackets go around"},
		{"tcp::42217", "", "no host"},
		{"[::1", "", "brackets go around"},
		{"unix:", "", "want unix:PATH"},
		{"unix:relative", "", "must be absolute"},
		{"tcp:", "", "want unix:PATH"},
		{"host:", "", "bad port"},
		{"host:99999", "", "bad port"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			a, err := rrdcached.ParseAddress(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), strconv.Quote(tc.in)) {
					t.Fatalf("rrdcached.ParseAddress(%q) = %v, %v; want an error naming it with %q", tc.in, a, err, tc.err)
				}
				return
			}
			if err != nil || a.String() != tc.want {
				t.Fatalf("rrdcached.ParseAddress(%q) = %v, %v; want %s", tc.in, a, err, tc.want)
			}
			if b, err := rrdcached.ParseAddress(a.String()); err != nil || b != a {
				t.Fatalf("rrdcached.ParseAddress(%q) = %v, %v; want it back", a, b, err)
			}
		})
	}
}

func newClient(t *testing.T, addr string) *rrdcached.Client {
	t.Helper()
	c, err := rrdcached.NewClient(addr, rrdcached.DefaultClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// t0 is a step boundary (step 10 s).
const t0 = 1_700_000_000

var testDefs = []string{"DS:a:GAUGE:60:U:U", "DS:b:COUNTER:60:0:U", "RRA:LAST:0:1:100"}

// fetchLast returns rrdtool fetch's rows (time → "a b" values) of file.
func fetchRows(t *testing.T, path string, from, to int64) map[int64]string {
	t.Helper()
	bin := testenv.LookPath(t, "rrdtool", "check what landed in RRD files")
	out, err := exec.Command(bin, "fetch", path, "LAST", "-s", strconv.FormatInt(from, 10), "-e", strconv.FormatInt(to, 10)).CombinedOutput()
	if err != nil {
		t.Fatalf("rrdtool fetch %s: %v\n%s", path, err, out)
	}
	rows := make(map[int64]string)
	for _, l := range strings.Split(string(out), "\n") {
		ts, vals, ok := strings.Cut(l, ": ")
		n, err := strconv.ParseInt(ts, 10, 64)
		if !ok || err != nil {
			continue
		}
		rows[n] = strings.Join(strings.Fields(vals), " ")
	}
	return rows
}

func TestClientAgainstRRDCached(t *testing.T) {
	srv := rrdctest.StartServer(t, "", "-w", "3600", "-f", "7200")
	c := newClient(t, srv.Address())
	ctx := context.Background()
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	file := "host a/load.rrd" // a space: escaped
	err := c.Create(ctx, file, rrdcached.CreateArgs{Step: 10 * time.Second, Begin: time.Unix(t0, 0), NoOverwrite: true, Defs: testDefs})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Create(ctx, file, rrdcached.CreateArgs{Step: 10 * time.Second, Begin: time.Unix(t0, 0), NoOverwrite: true, Defs: testDefs})
	var re *rrdcached.RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), srv.Address()) || !strings.Contains(err.Error(), "CREATE") {
		t.Fatalf("second CREATE -O = %v; want a RefusedError naming the peer and the command", err)
	}

	// A BATCH of 12 updates, the 5th dated before the 4th: rrdcached
	// numbers the refused command 5.
	var cmds []string
	for i := 1; i <= 12; i++ {
		ts := t0 + int64(i)*10
		if i == 5 {
			ts = t0 + 5
		}
		cmds = append(cmds, rrdcached.UpdateLine(file, fmt.Sprintf("%d:%d:%d", ts, i, 100*i)))
	}
	berrs, err := c.Batch(ctx, cmds)
	if err != nil {
		t.Fatal(err)
	}
	if len(berrs) != 1 || berrs[0].Command != 5 || !strings.Contains(berrs[0].Message, "illegal attempt to update") {
		t.Fatalf("batch errors %+v; want command 5 refused as illegal time", berrs)
	}
	if err := c.Update(ctx, file, fmt.Sprintf("%d:13:1300", t0+130), fmt.Sprintf("%d:14:1400", t0+140)); err != nil {
		t.Fatal(err)
	}
	last, err := c.Last(ctx, file)
	if err != nil || last.Unix() != t0+140 {
		t.Fatalf("LAST = %v, %v; want the queued %d", last.Unix(), err, t0+140)
	}
	if err := c.Flush(ctx, file); err != nil {
		t.Fatal(err)
	}
	info, err := c.Info(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, v := range info {
		got[v.Key] = v.Value
	}
	if got["last_update"] != strconv.Itoa(t0+140) || got["step"] != "10" || got["ds[b].type"] != "COUNTER" {
		t.Fatalf("INFO last_update %q step %q ds[b].type %q", got["last_update"], got["step"], got["ds[b].type"])
	}
	first, err := c.First(ctx, file, 0)
	if err != nil || first.Unix() != t0+140-99*10 {
		t.Fatalf("FIRST = %v, %v; want %d", first.Unix(), err, t0+140-99*10)
	}
	rows := fetchRows(t, filepath.Join(srv.Dir, file), t0, t0+140)
	for i := 1; i <= 14; i++ {
		want := fmt.Sprintf("%.10e", float64(i))
		if i == 5 {
			// Refused: the gauge's next value, 6 at t0+60, covers the
			// step since the update before it.
			want = fmt.Sprintf("%.10e", 6.0)
		}
		if r := rows[t0+int64(i)*10]; !strings.HasPrefix(r, want+" ") {
			t.Errorf("row %d: %q, want a = %s", t0+int64(i)*10, r, want)
		}
	}
	st, err := c.Stats(ctx)
	if err != nil || len(st) == 0 {
		t.Fatalf("STATS = %v, %v", st, err)
	}
	for _, s := range st {
		if s.Name == "UpdatesReceived" && s.Value != 13 {
			t.Errorf("UpdatesReceived %d, want 13 (12 in the batch, one UPDATE)", s.Value)
		}
	}
	if err := c.Quit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("PING after QUIT (a new connection): %v", err)
	}
}

// TestClientReconnects: the server is killed and started again between
// two commands; the client's next command works on a new connection. With
// the server down, the error names the peer and is a PeerError.
func TestClientReconnects(t *testing.T) {
	srv := rrdctest.StartServer(t, "")
	c := newClient(t, srv.Address())
	ctx := context.Background()
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	err := c.Ping(ctx)
	var pe *rrdcached.PeerError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), srv.Address()) {
		t.Fatalf("PING of a killed server = %v; want a PeerError naming %s", err, srv.Address())
	}
	srv.Restart()
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("PING after restart: %v", err)
	}
	srv.Restart() // the client's connection is now stale
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("PING on a connection the server closed (want one retry on a new one): %v", err)
	}
}

func TestClientHonoursContextDeadline(t *testing.T) {
	srv := rrdctest.StartServer(t, "")
	srv.Stop()
	// A listener that accepts and never answers: the deadline ends it.
	l := listenSilent(t, filepath.Join(filepath.Dir(srv.Sock), "silent"))
	c := newClient(t, "unix:"+l)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := c.Ping(ctx)
	if !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
		t.Fatalf("PING of a silent server = %v; want a deadline error", err)
	}
}

func TestClientRefusesOverlongLines(t *testing.T) {
	c := newClient(t, "unix:/nonexistent/sock")
	err := c.Update(context.Background(), "a.rrd", strings.Repeat("1", rrdcached.MaxLine))
	if err == nil || !strings.Contains(err.Error(), "at most 4096") {
		t.Fatalf("Update of a long line = %v", err)
	}
}
