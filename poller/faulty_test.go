package poller_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/internal/testing/simtest"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/spool"
)

// fault is how a faulty agent answers a request.
type fault string

const (
	faultMalformed fault = "malformed"  // bytes that are not SNMP
	faultOversized fault = "oversized"  // a 60 KB answer: every value a huge text
	faultWrongType fault = "wrong-type" // text, an IpAddress, an OID, a negative Integer for counters
	faultOtherID   fault = "other-id"   // the right answer with someone else's request id
	faultDuplicate fault = "duplicate"  // the right answer, twice
	faultLate      fault = "late"       // the right answer, after the timeout
	faultSilent    fault = "silent"     // no answer
	faultLoop      fault = "loop"       // walks: ifIndex.5 for every varbind, again and again
)

// faultyAgent answers SNMP Gets on 127.0.0.1 with one fault. Good values
// are Counter32 1000 (and TimeTicks for sysUpTime).
type faultyAgent struct {
	conn  *net.UDPConn
	snmp  *gosnmp.GoSNMP // decodes requests; its own (gosnmp.Default is shared)
	fault fault
	late  time.Duration
	wg    sync.WaitGroup
	sent  sync.WaitGroup // late answers in flight
}

func startFaultyAgent(t *testing.T, f fault, late time.Duration) *faultyAgent {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	a := &faultyAgent{conn: conn, snmp: &gosnmp.GoSNMP{Version: gosnmp.Version2c}, fault: f, late: late}
	a.wg.Add(1)
	go a.serve(t)
	t.Cleanup(func() { conn.Close(); a.wg.Wait(); a.sent.Wait() })
	return a
}

func (a *faultyAgent) serve(t *testing.T) {
	defer a.wg.Done()
	buf := make([]byte, 65536)
	for {
		n, from, err := a.conn.ReadFromUDP(buf)
		if err != nil {
			return // closed
		}
		req, err := a.snmp.SnmpDecodePacket(buf[:n])
		if err != nil {
			t.Errorf("faulty agent: decode request: %v", err)
			continue
		}
		a.answer(t, req, from)
	}
}

func (a *faultyAgent) answer(t *testing.T, req *gosnmp.SnmpPacket, to *net.UDPAddr) {
	send := func(b []byte) {
		if _, err := a.conn.WriteToUDP(b, to); err != nil && !strings.Contains(err.Error(), "closed") {
			t.Errorf("faulty agent %s: send %d bytes: %v", a.fault, len(b), err)
		}
	}
	switch a.fault {
	case faultSilent:
	case faultMalformed:
		send([]byte{0x30, 0x82, 0xff, 0xff, 0x02, 0x01, 0x01, 0x04, 0x06, 'p', 'u', 'b'})
	case faultLate:
		a.sent.Add(1)
		time.AfterFunc(a.late, func() { defer a.sent.Done(); send(response(t, req, 0, goodValue)) })
	case faultOtherID:
		send(response(t, req, 7919, goodValue))
	case faultDuplicate:
		b := response(t, req, 0, goodValue)
		send(b)
		send(b)
	case faultOversized:
		size := 60000 / len(req.Variables)
		send(response(t, req, 0, func(string, int) gosnmp.SnmpPDU {
			return gosnmp.SnmpPDU{Type: gosnmp.OctetString, Value: []byte(strings.Repeat("A", size))}
		}))
	case faultWrongType:
		send(response(t, req, 0, wrongValue))
	case faultLoop:
		b := response(t, req, 0, goodValue)
		if req.PDUType == gosnmp.GetBulkRequest || req.PDUType == gosnmp.GetNextRequest {
			resp := &gosnmp.SnmpPacket{Version: req.Version, Community: req.Community, PDUType: gosnmp.GetResponse, RequestID: req.RequestID}
			for range req.Variables {
				resp.Variables = append(resp.Variables, gosnmp.SnmpPDU{Name: ".1.3.6.1.2.1.2.2.1.1.5", Type: gosnmp.Integer, Value: 5})
			}
			var err error
			if b, err = resp.MarshalMsg(); err != nil {
				t.Errorf("faulty agent: marshal response: %v", err)
			}
		}
		send(b)
	}
}

func goodValue(oid string, _ int) gosnmp.SnmpPDU {
	if strings.TrimPrefix(oid, ".") == poller.OIDSysUpTime {
		return gosnmp.SnmpPDU{Type: gosnmp.TimeTicks, Value: uint32(100 * 86400 * 100)}
	}
	return gosnmp.SnmpPDU{Type: gosnmp.Counter32, Value: uint(1000)}
}

func wrongValue(_ string, i int) gosnmp.SnmpPDU {
	return []gosnmp.SnmpPDU{
		{Type: gosnmp.OctetString, Value: []byte("forty-two")},
		{Type: gosnmp.IPAddress, Value: "127.0.0.1"},
		{Type: gosnmp.ObjectIdentifier, Value: ".1.3.6.1"},
		{Type: gosnmp.Integer, Value: -5},
	}[i%4]
}

// response marshals the answer to req, its request id moved by idDelta.
func response(t *testing.T, req *gosnmp.SnmpPacket, idDelta uint32, value func(oid string, i int) gosnmp.SnmpPDU) []byte {
	resp := &gosnmp.SnmpPacket{Version: req.Version, Community: req.Community, PDUType: gosnmp.GetResponse,
		RequestID: req.RequestID + idDelta, Variables: make([]gosnmp.SnmpPDU, len(req.Variables))}
	for i, v := range req.Variables {
		resp.Variables[i] = value(v.Name, i)
		resp.Variables[i].Name = v.Name
	}
	b, err := resp.MarshalMsg()
	if err != nil {
		t.Errorf("faulty agent: marshal response: %v", err)
	}
	return b
}

// TestFaultyAgentsNeverBlockTheCycle polls, in one cycle, healthy simulated
// devices and one agent of each fault. The cycle ends well within its
// deadline, every healthy device's values land, each fault is counted by
// kind, and no bad value is spooled as good: a wrong type is an unknown,
// an unanswered poll writes no entry.
func TestFaultyAgentsNeverBlockTheCycle(t *testing.T) {
	const timeout = 300 * time.Millisecond
	faults := []fault{faultMalformed, faultOversized, faultWrongType, faultOtherID, faultDuplicate, faultLate, faultSilent}
	sim := simtest.Serve(t, simOptions(4))
	healthy := simTargets(t, sim, "if-mib:2", "", 0, 1, 2, 3)
	var b strings.Builder
	for _, f := range faults {
		a := startFaultyAgent(t, f, 2*timeout)
		fmt.Fprintf(&b, "agent-%s %s community=public profile=if-mib:2 timeout=%s retries=0\n", f, a.conn.LocalAddr(), timeout)
	}
	faulty, err := fleet.ParseTargets(strings.NewReader(b.String()), "faulty.targets", nil)
	if err != nil {
		t.Fatal(err)
	}
	sp := openSpool(t)
	po := pollOptions()
	po.Interval, po.CycleTimeout = 10*time.Second, 5*time.Second
	p, err := poller.New(po, append(healthy, faulty...), sp, &sink{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := p.Cycle(context.Background())
	if st.Duration >= po.CycleTimeout || st.Overrun != 0 {
		t.Fatalf("cycle took %v (deadline %v), %d overrun", st.Duration, po.CycleTimeout, st.Overrun)
	}
	got := []int{st.OK, st.Failed, st.Timeouts, st.Malformed, st.AgentErrors, st.OtherErrors, st.WrongTypes}
	want := []int{4 + 3, 4, 3, 1, 0, 0, wrongTypesIn(faulty)}
	if !slices.Equal(got, want) {
		t.Errorf("ok, failed, timeouts, malformed, agent errors, other errors, wrong types = %v, want %v", got, want)
	}
	for _, tg := range healthy {
		checkEntry(t, p, sp, tg.Name, func(v spool.Value) bool { return v.Type != spool.Unknown })
	}
	checkEntry(t, p, sp, "agent-duplicate", func(v spool.Value) bool {
		return v.Type == spool.Counter && v.Counter == 1000 || v.Type == spool.Gauge && v.Name == "uptime"
	})
	for _, f := range []fault{faultOversized, faultWrongType} {
		checkEntry(t, p, sp, "agent-"+string(f), func(v spool.Value) bool { return v.Type == spool.Unknown })
	}
	for f, reason := range map[fault]string{faultMalformed: "sanity", faultOtherID: "timeout", faultLate: "timeout", faultSilent: "timeout"} {
		name := "agent-" + string(f)
		ds, _ := p.Status(name)
		if ds.LastSuccess.After(st.Start) || ds.Failures != 1 || !strings.Contains(ds.LastError, reason) {
			t.Errorf("%s: last success %v, failures %d, last error %q; want one with %q", name, ds.LastSuccess, ds.Failures, ds.LastError, reason)
		}
		if n := entriesOf(t, sp, name); n != 0 {
			t.Errorf("%s: %d entries spooled for an unanswered poll", name, n)
		}
	}
}

// wrongTypesIn counts the varbinds the oversized and wrong-type agents
// answer with an unusable type: all of their targets' OIDs.
func wrongTypesIn(ts []*fleet.Target) int {
	n := 0
	for _, t := range ts {
		if t.Name == "agent-"+string(faultOversized) || t.Name == "agent-"+string(faultWrongType) {
			n += len(t.Profile.OIDs())
		}
	}
	return n
}

// checkEntry reads the one entry of target name and checks every value.
func checkEntry(t *testing.T, p *poller.Poller, sp *spool.Spool, name string, ok func(spool.Value) bool) {
	t.Helper()
	ds, _ := p.Status(name)
	e, err := sp.Read(spool.Ref{Hash: spool.KeyHash(name), Time: ds.LastSuccess.Unix()})
	if err != nil {
		t.Errorf("%s: %v (status %+v)", name, err, ds)
		return
	}
	for _, v := range e.Values {
		if !ok(v) {
			t.Errorf("%s: value %+v", name, v)
		}
	}
}

// entriesOf counts the spooled entries of target name.
func entriesOf(t *testing.T, sp *spool.Spool, name string) int {
	t.Helper()
	h := spool.KeyHash(name)
	n := 0
	for ts := time.Now().Unix() - 60; ts <= time.Now().Unix()+1; ts++ {
		if _, err := sp.Read(spool.Ref{Hash: h, Time: ts}); err == nil {
			n++
		}
	}
	return n
}

// TestLoopingAgentEndsItsDiscovery: an agent whose walk never moves on
// (the same OID again) ends that device's discovery with an error after
// two requests, in its status and counters; the other devices' rows land.
func TestLoopingAgentEndsItsDiscovery(t *testing.T) {
	sim := simtest.Serve(t, simOptions(2))
	a := startFaultyAgent(t, faultLoop, 0)
	text := fmt.Sprintf("loop %s community=public profile=if-mib timeout=300ms retries=0\n", a.conn.LocalAddr())
	for i := range 2 {
		text += fmt.Sprintf("%s %s community=%s profile=if-mib\n", sim.Fleet().Name(i), sim.Addr(), sim.Fleet().Name(i))
	}
	ts, err := fleet.ParseTargets(strings.NewReader(text), "loop.targets", nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := poller.New(pollOptions(), ts, openSpool(t), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := p.Cycle(context.Background()); st.Rows != 2*4 {
		t.Errorf("%+v: want the 8 rows of the simulated devices", st)
	}
	s, _ := p.Status("loop")
	d := p.DiscoveryStats()
	if !strings.Contains(s.DiscoveryError, "agent breaks the walk") || d.Failures != 1 || d.Discoveries != 2 || d.Requests > 2+2*2 {
		t.Errorf("discovery error %q, stats %+v", s.DiscoveryError, d)
	}
}
