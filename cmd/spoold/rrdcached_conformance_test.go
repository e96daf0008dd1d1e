package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/rrdctest"
)

// The conformance of the real daemon (its backend, librrd, the spool) with
// Debian's rrdcached where the two differ on purpose. TestConformanceWithRRDCached
// (rrdcached_e2e_test.go) sends rrdctest's script, where they answer alike;
// this file sends the commands where they do not, and every difference
// spoold accepts is one row of differenceScript, with the reason. A reply
// that differs and is not in the table fails the test, as does a row whose
// replies are no longer what the table says. docs/rrdcached.md
// ("Differences from rrdcached") shows the same table; the test checks it
// there row by row.

// A scriptLine is one line sent and, when the servers answer it differently
// on purpose, each one's reply and why (the status line, normalized as
// rrdctest.Normalize does; "(connection closed)" when the server closes).
type scriptLine struct {
	sent              string
	rrdcached, spoold string
	why               string // "": both answer alike
}

func fixtureAt(offset int) string { return strconv.Itoa(rrdctest.Begin + offset) }

// differenceScript is sent to rrdctest's fixture on both servers, one
// session per slice. Each accepted difference stands on a file of its own,
// or follows from the row before it, as its reason says.
var differenceScript = [][]scriptLine{{
	{sent: "UPDATE a.rrd " + fixtureAt(10) + ":1",
		rrdcached: "0 errors, enqueued 1 value(s).",
		spoold:    "-1 expected 2 data source readings (got 1) from " + fixtureAt(10) + ":1",
		why:       "rrdcached queues an update librrd will refuse and drops it at the write, where only its log says so; spoold refuses it in the reply"},
	{sent: "UPDATE a.rrd " + fixtureAt(20) + ":1:abc",
		rrdcached: "0 errors, enqueued 1 value(s).",
		spoold:    "-1 " + fixtureAt(20) + ":1:abc: data source y: not a simple unsigned integer: 'abc'",
		why:       "the same for a value the data source's type (COUNTER) does not take"},
	{sent: "UPDATE a.rrd " + fixtureAt(30) + ":1:2"},
	{sent: "PENDING a.rrd",
		rrdcached: "3 updates pending",
		spoold:    "1 updates pending",
		why:       "spoold never queued the two refused updates"},
	{sent: "FORGET a.rrd",
		rrdcached: "0 Gone!",
		spoold:    "0 Gone! (1 acknowledged update(s) kept: spoold still writes them)",
		why:       "an acknowledged update is never dropped: spoold forgets the file's cache entry, not its spooled updates, and says so"},
	{sent: "PENDING a.rrd",
		rrdcached: "0 updates pending",
		spoold:    "1 updates pending",
		why:       "the update FORGET kept is still spooled"},
	{sent: "FLUSH a.rrd",
		rrdcached: "0 Nothing to flush: $DIR/a.rrd.",
		spoold:    "0 Successfully flushed $DIR/a.rrd.",
		why:       "it is written at the FLUSH"},
	{sent: "LAST a.rrd",
		rrdcached: "0 " + fixtureAt(0),
		spoold:    "0 " + fixtureAt(30),
		why:       "and is in the file"},
	{sent: "LIST /*.rrd",
		rrdcached: "-1 stat $DIR/*.rrd: No such file or directory",
		spoold:    "-1 List $DIR/*.rrd: Operation not supported",
		why:       "spoold does not take wildcards in LIST and says so; rrdcached takes them as a file name"},
	{sent: "SUSPEND zz.rrd"},
	{sent: "PING",
		rrdcached: "(connection closed)",
		spoold:    "0 PONG",
		why:       "after SUSPEND of a file not cached rrdcached closes the connection; spoold answers the same error and goes on"},
}, {
	{sent: "UPDATE sub/b.rrd " + fixtureAt(10) + ":1:2"},
	{sent: "CREATE sub/b.rrd -s 10 -b " + fixtureAt(0) + " DS:x:GAUGE:20:U:U RRA:AVERAGE:0.5:1:10",
		rrdcached: "0 RRD created OK",
		spoold:    "-1 RRD Error: create sub/b.rrd: 1 acknowledged updates of the file are still spooled; spoold does not replace it under them (FLUSH it first)",
		why:       "CREATE without -O replaces a file, but spoold not while acknowledged updates of it wait (rrdcached drops them at the write: the new file has other data sources)"},
	{sent: "SUSPEND sub/b.rrd"},
	{sent: "FLUSH sub/b.rrd",
		rrdcached: "0 Successfully flushed $DIR/sub/b.rrd.",
		spoold:    "-1 Flush failed: flush /sub/b.rrd: held (suspended): not written until resumed",
		why:       "a suspended file is not written, and a FLUSH of it says so instead of answering success"},
	{sent: "RESUME sub/b.rrd"},
	{sent: "FLUSH sub/b.rrd"},
}, {
	{sent: "LAST zz.rrd"}, // LibreNMS's test whether a file exists
	{sent: "UPDATE a.rrd N:1:2",
		rrdcached: "-1 Cannot find timestamp in 'N:1:2'!",
		spoold:    "0 errors, enqueued 1 value(s).",
		why:       "spoold takes N as now, as librrd does (rrdtool's client replaces it before rrdcached sees it)"},
	{sent: "UPDATE sub/b.rrd 4000000000:1:2",
		rrdcached: "0 errors, enqueued 1 value(s).",
		spoold:    "-1 update time 4000000000 of sub/b.rrd is more than 10m0s ahead of the clock (--future-tolerance)",
		why:       "a time far ahead of the clock would block every later update of the file; rrdcached takes it"},
	{sent: "CREATE deep/new/c.rrd -s 10 -b " + fixtureAt(0) + " DS:x:GAUGE:20:U:U RRA:AVERAGE:0.5:1:10",
		rrdcached: "-1 No permission to recursively create: $DIR/deep/new",
		spoold:    "0 RRD created OK",
		why:       "spoold makes a new file's directories; rrdcached only with -R"},
}}

// statusLine renders what a server answered to a line as a table row shows it.
func statusLine(e rrdctest.Exchange) string {
	if o := e.Outcome(); o != "" {
		return o
	}
	first, _, _ := strings.Cut(e.Reply.String(), "\n")
	return first
}

// TestDifferencesFromRRDCached sends differenceScript to Debian's rrdcached
// and to the daemon, each on rrdctest's fixture: a line outside the table
// gets the same reply, status line and data, from both; a row of the table
// gets what the row says from each.
func TestDifferencesFromRRDCached(t *testing.T) {
	rsock, rdir, r := startFixturePair(t, nil, nil)

	var script []rrdctest.Session
	for _, s := range differenceScript {
		var lines rrdctest.Session
		for _, l := range s {
			lines = append(lines, l.sent)
		}
		script = append(script, lines)
	}
	want := runNormalized(t, "rrdcached", rsock, rdir, script)
	got := runNormalized(t, "spoold", r.sock, r.rrd(""), script)
	for i, s := range differenceScript {
		for j, l := range s {
			theirs, ours := exchangeAt(want, i, j), exchangeAt(got, i, j)
			if l.why == "" {
				if a, b := replyText(theirs), replyText(ours); a != b {
					t.Errorf("session %d, %q: rrdcached answers %q, spoold %q, and the table accepts no difference", i+1, l.sent, a, b)
				}
				continue
			}
			if a := statusLine(theirs); a != l.rrdcached {
				t.Errorf("session %d, %q: rrdcached answers %q, the table says %q", i+1, l.sent, a, l.rrdcached)
			}
			if b := statusLine(ours); b != l.spoold {
				t.Errorf("session %d, %q: spoold answers %q, the table says %q", i+1, l.sent, b, l.spoold)
			}
		}
	}
	checkDifferencesDoc(t)
}

// TestPermissionsLikeRRDCached sends rrdctest's permission script to a
// listener of the daemon with --listen-permissions and to one of rrdcached
// with -P, the same list: every reply alike.
func TestPermissionsLikeRRDCached(t *testing.T) {
	var limited string
	rsock, rdir, r := startFixturePair(t, []string{"-P", rrdctest.LimitedPermissions}, func(r *protoRig) []string {
		limited = filepath.Join(r.dir, "limited.sock")
		return []string{"--listen-permissions", rrdctest.LimitedPermissions, "--listen", "unix:" + limited}
	})
	want := runNormalized(t, "rrdcached", rsock, rdir, rrdctest.PermissionScript())
	got := runNormalized(t, "spoold", limited, r.rrd(""), rrdctest.PermissionScript())
	if d := rrdctest.Diff("rrdcached", want, "spoold", got); d != "" {
		t.Errorf("replies differ on a listener allowing %s:\n%s", rrdctest.LimitedPermissions, d)
	}
}

// startFixturePair starts Debian's rrdcached (rrdcachedArgs before its -l)
// and the daemon (a write delay past the fixture's age, and what spooldArgs returns), each on a
// copy of rrdctest's fixture: rrdcached's socket and directory, and the
// daemon's rig.
func startFixturePair(t *testing.T, rrdcachedArgs []string, spooldArgs func(*protoRig) []string) (string, string, *protoRig) {
	t.Helper()
	requireRRDTool(t)
	base := t.TempDir()
	rdir := filepath.Join(base, "rrdcached")
	if err := os.Mkdir(rdir, 0o755); err != nil {
		t.Fatal(err)
	}
	rrdctest.Prepare(t, rdir)
	rsock := filepath.Join(base, "rrdcached.sock")
	rrdctest.Start(t, rdir, append(rrdcachedArgs, "-l", "unix:"+rsock)...)
	r := newProtoRig(t)
	rrdctest.Prepare(t, r.rrd(""))
	// spoold counts the write delay from an update's time, rrdcached's -w
	// from its arrival: the fixture's updates are dated from
	// rrdctest.Begin, so a delay past Begin's age keeps them spooled until
	// the scripts' FLUSH, as rrdcached keeps them queued, whatever the time
	// between the lines.
	delay := (time.Since(time.Unix(rrdctest.Begin, 0)) + 24*time.Hour).Truncate(time.Hour)
	args := []string{"--write-delay", delay.String()}
	if spooldArgs != nil {
		args = append(args, spooldArgs(r)...)
	}
	r.start(t, args...)
	return rsock, rdir, r
}

// runNormalized runs script against the server on sock whose RRD directory
// is dir, and normalizes the transcript.
func runNormalized(t *testing.T, name, sock, dir string, script []rrdctest.Session) [][]rrdctest.Exchange {
	t.Helper()
	ex, err := rrdctest.Run("unix", sock, script, 10*time.Second)
	if err != nil {
		t.Fatalf("the script against %s: %v", name, err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return rrdctest.Normalize(ex, real)
}

func exchangeAt(t [][]rrdctest.Exchange, session, line int) rrdctest.Exchange {
	if session < len(t) && line < len(t[session]) {
		return t[session][line]
	}
	return rrdctest.Exchange{}
}

// replyText is the whole reply, data lines too.
func replyText(e rrdctest.Exchange) string {
	if e.Reply == nil {
		return statusLine(e)
	}
	return e.Reply.String()
}

// differenceRow is a row of the table as docs/rrdcached.md shows it.
func differenceRow(l scriptLine) string {
	return fmt.Sprintf("| `%s` | `%s` | `%s` | %s |", l.sent, l.rrdcached, l.spoold, l.why)
}

// checkDifferencesDoc: docs/rrdcached.md's "Differences from rrdcached"
// table has every row of differenceScript, in order, and no other.
func checkDifferencesDoc(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile("../../docs/rrdcached.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Differences from rrdcached\n")
	if !ok {
		t.Fatal(`docs/rrdcached.md has no "## Differences from rrdcached" section`)
	}
	var doc []string
	for _, l := range strings.Split(sec, "\n") {
		if strings.HasPrefix(l, "| `") {
			doc = append(doc, l)
		} else if strings.HasPrefix(l, "#") {
			break
		}
	}
	var want []string
	for _, s := range differenceScript {
		for _, l := range s {
			if l.why != "" {
				want = append(want, differenceRow(l))
			}
		}
	}
	if strings.Join(doc, "\n") != strings.Join(want, "\n") {
		t.Errorf("docs/rrdcached.md's table of differences is not the test's; want these rows:\n%s\nhave:\n%s", strings.Join(want, "\n"), strings.Join(doc, "\n"))
	}
}
