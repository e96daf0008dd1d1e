package rrdctest

import (
	"strings"
	"testing"

	"github.com/spoold/spoold/rrdcached"
)

func ex(sent string, status int, msg string, lines ...string) Exchange {
	return Exchange{Sent: sent, Reply: &rrdcached.Reply{Status: status, Message: msg, Lines: lines}}
}

// TestNormalizeAndDiff: what may differ between correct servers is made
// equal; anything else is reported with both sides.
func TestNormalizeAndDiff(t *testing.T) {
	a := [][]Exchange{{
		ex("FLUSH x.rrd", 0, "Successfully flushed /a/x.rrd."),
		ex("STATS", 2, "Statistics follow", "QueueLength: 3", "UpdatesReceived: 9"),
		ex("LIST /", 2, "RRDs", "b.rrd", "a.rrd"),
		ex("FETCH x.rrd AVERAGE 1 2 z", -1, "field z not found in \x05"),
		{Sent: "QUIT"},
	}}
	b := [][]Exchange{{
		ex("FLUSH x.rrd", 0, "Successfully flushed /b/x.rrd."),
		ex("STATS", 2, "Statistics follow", "QueueLength: 0", "UpdatesReceived: 1"),
		ex("LIST /", 2, "RRDs", "a.rrd", "b.rrd"),
		ex("FETCH x.rrd AVERAGE 1 2 z", -1, "field z not found in /b/x.rrd"),
		{Sent: "QUIT"},
	}}
	if d := Diff("a", Normalize(a, "/a"), "b", Normalize(b, "/b")); d != "" {
		t.Errorf("equivalent transcripts differ:\n%s", d)
	}
	b[0][0] = ex("FLUSH x.rrd", 0, "Nothing to flush: /b/x.rrd.")
	b[0][2] = ex("LIST /", 1, "RRDs", "a.rrd")
	b[0][4] = Exchange{Sent: "QUIT", Closed: true}
	d := Diff("a", Normalize(a, "/a"), "b", Normalize(b, "/b"))
	for _, want := range []string{`line 1 "FLUSH x.rrd"`, `"0 Nothing to flush: $DIR/x.rrd.\n"`, `line 3 "LIST /"`, "(connection closed)"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	if strings.Contains(d, "STATS") {
		t.Errorf("diff reports STATS values:\n%s", d)
	}
}
