package poller

import (
	"log/slog"
	"strings"
	"testing"
)

// TestProblemsEndOnlyWhenDevicesAnswer: the problems of a device that is
// down are logged once, and over only at a cycle whose devices answered:
// one that sat its backoff out (skipped) or was cut short by the cycle's
// deadline (overrun) says nothing of it.
func TestProblemsEndOnlyWhenDevicesAnswer(t *testing.T) {
	var logs strings.Builder
	p := &Poller{log: slog.New(slog.NewTextHandler(&logs, nil))}
	for i, st := range []CycleStats{
		{Failed: 1, Timeouts: 1},
		{Skipped: 1},
		{Overrun: 1},
		{Failed: 1, Timeouts: 1},
		{Overrun: 1, OK: 1},
		{Failed: 1, Timeouts: 1},
		{OK: 1},
	} {
		st.Seq = uint64(i + 1)
		p.logProblems(st)
	}
	out := logs.String()
	if got := strings.Count(out, `msg="poll cycle problems"`); got != 1 {
		t.Errorf("problems logged %d times; want once:\n%s", got, out)
	}
	if got := strings.Count(out, `msg="poll cycle problems over"`); got != 1 || !strings.Contains(out, `msg="poll cycle problems over" seq=7`) {
		t.Errorf("problems over logged %d times; want once, at the cycle whose device answered (7):\n%s", got, out)
	}
}
