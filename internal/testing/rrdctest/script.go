package rrdctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// The fixture Prepare makes: a.rrd (step 10 s, 10 rows, last update
// Begin) with data sources x (GAUGE) and y (COUNTER), an empty directory
// sub/ holding b.rrd (same layout), and notes.txt, which LIST skips.
const (
	Begin = 1700000000
	Step  = 10
	Rows  = 10
)

// CreateArgs are the rrdtool create arguments of the fixture's files after
// the file name.
var CreateArgs = []string{"-s", strconv.Itoa(Step), "-b", strconv.Itoa(Begin),
	"DS:x:GAUGE:20:U:U", "DS:y:COUNTER:20:U:U", "RRA:AVERAGE:0.5:1:" + strconv.Itoa(Rows)}

// Prepare makes the fixture in dir with the rrdtool command (a missing
// rrdtool ends the test as testenv.Missing does).
func Prepare(t testing.TB, dir string) {
	t.Helper()
	rrdtool := testenv.LookPath(t, "rrdtool", "the conformance fixture's RRD files are made with rrdtool create")
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"a.rrd", "sub/b.rrd"} {
		out, err := exec.Command(rrdtool, append([]string{"create", filepath.Join(dir, f)}, CreateArgs...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("rrdtool create %s: %v\n%s", f, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not an RRD file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func at(offset int) string { return strconv.Itoa(Begin + offset) }

// Script is the conformance script for a server of the fixture's
// directory started with every command allowed. Its commands need of the
// server's backend only what a backend that keeps updates in memory and
// sees the directory can answer as librrd does (file existence, the last
// update time, rows); withData adds the commands whose answers only librrd
// gives (INFO, FETCH of a file with data, a successful CREATE), for a
// backend that writes real RRD files.
func Script(withData bool) []Session {
	s := []Session{{
		"PING", "ping", "FOO bar", "",
		"UPDATE a.rrd " + at(10) + ":1:2",
		"UPDATE a.rrd " + at(10) + ":1:2",
		"UPDATE a.rrd " + at(20) + ":1:2 " + at(20) + ":1:3",
		"update nope.rrd " + at(20) + ":1:2",
		"UPDATE ../x.rrd " + at(20) + ":1:2",
		"UPDATE /etc/x.rrd " + at(20) + ":1:2",
		"UPDATE a.rrd",
		"UPDATE",
		"PENDING a.rrd", "PENDING zz.rrd",
		"FLUSH zz.rrd", "FLUSH a.rrd", "FLUSH a.rrd", "FLUSH sub/b.rrd",
		"PENDING a.rrd",
		"LAST a.rrd", "LAST sub/b.rrd",
		"FIRST a.rrd 0", "FIRST a.rrd 5", "FIRST a.rrd -1", "FIRST a.rrd",
		"SUSPEND a.rrd", "SUSPEND a.rrd", "RESUME a.rrd", "RESUME a.rrd",
		"SUSPENDALL", "RESUMEALL",
		"INFO zz.rrd", "FETCH zz.rrd AVERAGE", "FETCH a.rrd AVERAGE 0x10 abc", "FETCH a.rrd AVERAGE x", "FETCH a.rrd",
		"CREATE a.rrd -O -s 10 -b " + at(0) + " DS:x:GAUGE:20:U:U RRA:AVERAGE:0.5:1:10",
		"CREATE c.rrd -b 100 DS:x:GAUGE:20:U:U RRA:AVERAGE:0.5:1:10",
		"CREATE c.rrd bogus", "CREATE c.rrd -s",
		"LIST /", "LIST RECURSIVE /", "LIST x", "LIST", "LIST RECURSIVE", "LIST /zz", "LIST /a.rrd", "LIST /sub",
		"STATS",
		"WROTE a.rrd", ".",
		"HELP", "HELP update", "HELP Batch", "HELP nosuch", "HELP .",
		"FORGET zz.rrd", "FORGET sub/b.rrd", "FORGET a.rrd", "FORGET a.rrd",
		"QUIT",
	}, {
		"BATCH",
		"UPDATE a.rrd " + at(30) + ":1:2",
		"UPDATE a.rrd " + at(30) + ":1:2",
		"PING",
		"FETCH a.rrd AVERAGE",
		"UPDATE nope.rrd " + at(40) + ":1:1",
		"BATCH",
		"FLUSHALL",
		"UPDATE a.rrd " + at(40) + ":1:2",
		"",
		"foo",
		"FLUSH a.rrd",
		"UPDATE ../../etc/passwd 1:1",
		".",
		"PENDING a.rrd",
		"BATCH", ".",
		"batch", "QUIT",
	}, {
		// What librrd's rrd_create sends for a file it makes itself while
		// its client is connected (collectd's rrdcached plugin with
		// CreateFiles): FORGET of the new file, not cached yet, before
		// and after its rename (the error ignored), then the updates.
		"forget sub/b.rrd", "forget sub/b.rrd",
		"update sub/b.rrd " + at(10) + ":1:2",
		"QUIT",
	}, {
		// rrdcached closes the connection after this error; spoold does
		// not, so it ends its session.
		"SUSPEND zz.rrd",
	}}
	if withData {
		s = append(s, Session{
			"FLUSH a.rrd",
			"INFO a.rrd",
			"FETCH a.rrd AVERAGE " + at(0) + " " + at(60),
			"FETCH a.rrd AVERAGE " + at(0) + " " + at(60) + " y",
			"FETCH a.rrd AVERAGE " + at(0) + " " + at(60) + " y y",
			"FETCH a.rrd AVERAGE " + at(0) + " " + at(60) + " x y x",
			"FETCH a.rrd AVERAGE " + at(0) + " " + at(60) + " z",
			"FETCH a.rrd FOO " + at(0) + " " + at(60),
			"CREATE d.rrd -s 10 -b " + at(0) + " DS:x:GAUGE:20:U:U RRA:AVERAGE:0.5:1:10",
			"LAST d.rrd",
			"INFO d.rrd",
			"CREATE d.rrd -O -s 10 -b " + at(0) + " DS:x:GAUGE:20:U:U RRA:AVERAGE:0.5:1:10",
			"CREATE e.rrd",
		})
	}
	return s
}

// LimitedPermissions is the -P list of the listener PermissionScript is
// sent to.
const LimitedPermissions = "PING,UPDATE,FLUSH"

// PermissionScript is sent to a listener allowing LimitedPermissions.
func PermissionScript() []Session {
	return []Session{{
		"PING", "STATS", "HELP ping", "UPDATE a.rrd " + at(50) + ":1:2", "FLUSH a.rrd",
		"FORGET a.rrd", "BATCH", ".", "LIST /", "FOO", "QUIT",
	}}
}
