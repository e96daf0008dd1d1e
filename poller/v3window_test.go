package poller_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/spoold/spoold/internal/testing/snmpsimtest"
	"github.com/spoold/spoold/poller"
)

// TestSnmpdRebootIsNotInTimeWindow: net-snmp's snmpd restarted (the same
// engine, its boots one more) answers a poll made with the engine state
// of before with a notInTimeWindow report. When the request resent with
// the new boots and time is lost (the relay lets only the first through),
// the poll's error names the report and what it means; with the device
// reachable again, the next poll resyncs and succeeds. snmpd's
// usmStatsNotInTimeWindows counts each report.
func TestSnmpdRebootIsNotInTimeWindow(t *testing.T) {
	dir, port := t.TempDir(), snmpsimtest.FreeUDPPort(t)
	stop := startSnmpdIn(t, dir, port)
	rl := startRelay(t, fmt.Sprintf("127.0.0.1:%d", port))
	rl.up.Store(true)
	line := fmt.Sprintf("v3 %s profile=if-mib:1 version=3 user=%s auth=SHA auth-pass=%s priv=AES priv-pass=%s timeout=500ms retries=0\n",
		rl.conn.LocalAddr(), v3User, v3AuthPass, v3PrivPass)
	po := pollOptions()
	po.BackoffAfter = 10
	p, err := poller.New(po, parseOne(t, line), openSpool(t), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := p.Cycle(context.Background()); st.OK != 1 {
		s, _ := p.Status("v3")
		t.Fatalf("first poll: %+v: %s", st, s.LastError)
	}
	stop()
	startSnmpdIn(t, dir, port)
	notInTimeWindows := func() uint {
		pkt, err := getV2c(port, "public", oidNotInTimeWindows)
		if err != nil {
			t.Fatal(err)
		}
		return pkt.Variables[0].Value.(uint)
	}

	rl.lastOne.Store(true)
	st := p.Cycle(context.Background())
	s, _ := p.Status("v3")
	const want = "SNMPv3 report notInTimeWindow: the agent's boots or time moved (restart or clock)"
	if st.Failed != 1 || !strings.Contains(s.LastError, want) {
		t.Errorf("poll of the rebooted agent, its resent request lost: %+v, error %q; want a failure naming %q", st, s.LastError, want)
	}
	if n := notInTimeWindows(); n != 1 {
		t.Errorf("snmpd sent %d notInTimeWindow reports, want 1", n)
	}

	rl.up.Store(true)
	if st := p.Cycle(context.Background()); st.OK != 1 {
		s, _ := p.Status("v3")
		t.Errorf("poll with the agent reachable: %+v: %s", st, s.LastError)
	}
}
