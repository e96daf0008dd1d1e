package rrdcached_test

import (
	"reflect"
	"testing"

	"github.com/spoold/spoold/rrdcached"
)

// TestBatchUpdatesOfOneFileAreOneCall: a BATCH's consecutive UPDATEs of
// one file reach the Backend in one Update call, and each command's
// outcome is its own: a refused value ends its own command only (its
// error line has its number, the next command's values are spooled), a
// command of another file or any other command ends the run first, so
// the errors come in command order.
func TestBatchUpdatesOfOneFileAreOneCall(t *testing.T) {
	s := startServer(t, nil)
	c := s.dial(t, 0)
	before := len(s.backend.updatesSeen())
	c.do("BATCH")
	c.send(
		"UPDATE a.rrd "+at(10)+":1:2",
		"UPDATE a.rrd "+at(20)+":1:2 "+at(15)+":1:2 "+at(25)+":1:2", // 15 is refused: 25 is not tried, as alone
		"UPDATE a.rrd "+at(30)+":1:2",
		"UPDATE a.rrd",
		"UPDATE a.rrd "+at(40)+":1:2",
		"UPDATE nope.rrd "+at(10)+":1:2",
		"UPDATE a.rrd "+at(50)+":1:2",
		"PING",
		"UPDATE a.rrd "+at(60)+":1:2",
	)
	want := rrdcached.Reply{Status: 4, Message: "errors", Lines: []string{
		"2 illegal attempt to update using time " + at(15) + ".000000 when last update time is " + at(20) + ".000000 (minimum one second step)",
		"4 No values updated.",
		"6 No such file: " + s.dir + "/nope.rrd",
		"8 Can't use 'PING' here.",
	}}
	if got := c.do("."); !reflect.DeepEqual(got, want) {
		t.Errorf("batch answer %q,\nwant %q", got, want)
	}
	calls := s.backend.updatesSeen()[before:]
	wantCalls := []string{"a.rrd", "a.rrd", "nope.rrd", "a.rrd", "a.rrd"} // 1-5 (again after the refusal), 6, 7, 9
	if !reflect.DeepEqual(calls, wantCalls) {
		t.Errorf("Update calls %q, want %q", calls, wantCalls)
	}
	wantPending := []string{at(10) + ":1:2", at(20) + ":1:2", at(30) + ":1:2", at(40) + ":1:2", at(50) + ":1:2", at(60) + ":1:2"}
	if p := c.do("PENDING a.rrd"); !reflect.DeepEqual(p.Lines, wantPending) {
		t.Errorf("pending after the batch: %q, want %q", p.Lines, wantPending)
	}
}
