package simulate

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testOptions() Options {
	o := DefaultOptions()
	o.Addr = "127.0.0.1:0"
	o.Devices = 100
	o.Interfaces = 4
	o.Workers = 2
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	o.Now = func() time.Time { return now }
	return o
}

func serve(t testing.TB, o Options) *Simulator {
	t.Helper()
	s, err := Listen(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return s
}

func get(t *testing.T, s *Simulator, version gosnmp.SnmpVersion, community string, oids ...string) (*gosnmp.SnmpPacket, error) {
	t.Helper()
	g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: uint16(s.Addr().Port), Community: community,
		Version: version, Timeout: 300 * time.Millisecond, Retries: 0}
	if err := g.Connect(); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	return g.Get(oids)
}

func TestGetAnswersTheTruth(t *testing.T) {
	o := testOptions()
	s := serve(t, o)
	f := s.Fleet()
	oids := []string{"1.3.6.1.2.1.1.3.0", "1.3.6.1.2.1.1.5.0", "1.3.6.1.2.1.31.1.1.1.6.1", "1.3.6.1.2.1.31.1.1.1.10.4",
		"1.3.6.1.2.1.2.2.1.14.2", "1.3.6.1.2.1.31.1.1.1.15.3", "1.3.6.1.4.1.2021.10.1.5.2", "1.3.6.1.4.1.2021.4.6.0",
		"1.3.6.1.2.1.31.1.1.1.6.5", "1.3.6.1.2.1.31.1.1.1.99.1", "1.3.6.1.2.1.31.1.1.1.6.0"}
	for _, i := range []int{0, 42, 99} {
		pkt, err := get(t, s, gosnmp.Version2c, f.Name(i), oids...)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range pkt.Variables {
			want := f.Value(i, oids[k], o.Now())
			if v.Name != want.Name || v.Type != want.Type || fmt.Sprint(v.Value) != fmt.Sprint(want.Value) {
				t.Errorf("device %d %s: got %v %v, want %v %v", i, oids[k], v.Type, v.Value, want.Type, want.Value)
			}
		}
		if types := []gosnmp.Asn1BER{gosnmp.TimeTicks, gosnmp.OctetString, gosnmp.Counter64, gosnmp.Counter64, gosnmp.Counter32,
			gosnmp.Gauge32, gosnmp.Integer, gosnmp.Integer, gosnmp.NoSuchInstance, gosnmp.NoSuchObject, gosnmp.NoSuchInstance}; len(pkt.Variables) == len(types) {
			for k, typ := range types {
				if pkt.Variables[k].Type != typ {
					t.Errorf("device %d %s: type %v, want %v", i, oids[k], pkt.Variables[k].Type, typ)
				}
			}
		}
	}
	if st := s.Stats(); st.Requests != 3 || st.Responses != 3 || st.Varbinds != 3*uint64(len(oids)) {
		t.Errorf("stats %+v", st)
	}
}

func TestCountersFollowTime(t *testing.T) {
	f := newFleet(func() Options { o := testOptions(); o.WrapAfter = time.Hour; return o }())
	c := findColumn("1.3.6.1.2.1.31.1.1.1.6")
	t0 := f.opts.Epoch
	for _, i := range []int{0, 7} {
		rate := c.Rate(i, 1)
		v0 := f.Value(i, "1.3.6.1.2.1.31.1.1.1.6.1", t0).Value.(uint64)
		v1 := f.Value(i, ".1.3.6.1.2.1.31.1.1.1.6.1", t0.Add(300*time.Second)).Value.(uint64)
		if v1-v0 != 300*rate {
			t.Errorf("device %d: moved %d in 300 s, want %d", i, v1-v0, 300*rate)
		}
		f.SetBehavior(i, Behavior{Wrap: true})
		f.Restart(i, t0)
		before := f.Value(i, "1.3.6.1.2.1.31.1.1.1.6.1", t0.Add(time.Hour-time.Second)).Value.(uint64)
		after := f.Value(i, "1.3.6.1.2.1.31.1.1.1.6.1", t0.Add(time.Hour+time.Second)).Value.(uint64)
		if before != -rate || after != rate {
			t.Errorf("device %d: wrap %d -> %d, want %d -> %d", i, before, after, -rate, rate)
		}
		if up := f.UptimeTicks(i, t0.Add(time.Minute)); up != 6000 {
			t.Errorf("device %d: uptime %d after a restart a minute ago", i, up)
		}
	}
}

func TestBehaviorsAreSpreadEvenly(t *testing.T) {
	o := testOptions()
	o.Devices = 1000
	o.Dead, o.Slow, o.Missing, o.Wrap, o.Restart, o.NoHC, o.Renumber = 0.1, 0.05, 0.02, 0.5, 1, 0.1, 0.03
	f := newFleet(o)
	var dead, slow, missing, wrap, restart, noHC, renumber int
	for i := range o.Devices {
		b := f.Behavior(i)
		dead += b2i(b.Dead)
		slow += b2i(b.Delay > 0)
		missing += b2i(b.Missing)
		wrap += b2i(b.Wrap)
		restart += b2i(b.RestartEvery > 0)
		noHC += b2i(b.NoHC)
		renumber += b2i(b.Renumber)
	}
	if dead != 100 || slow != 50 || missing != 20 || wrap != 500 || restart != 1000 || noHC != 100 || renumber != 30 {
		t.Errorf("dead %d slow %d missing %d wrap %d restart %d no-HC %d renumber %d", dead, slow, missing, wrap, restart, noHC, renumber)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestDeadAndUnknownCommunitiesGetNoAnswer(t *testing.T) {
	s := serve(t, testOptions())
	s.Fleet().SetBehavior(3, Behavior{Dead: true})
	for _, c := range []string{s.Fleet().Name(3), "dev100", "dev00100", "public", "dev0001"} {
		if _, err := get(t, s, gosnmp.Version2c, c, "1.3.6.1.2.1.1.3.0"); err == nil {
			t.Errorf("community %q: answered", c)
		}
	}
	if st := s.Stats(); st.Dropped != 1 || st.BadCommunity != 4 || st.Responses != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestV1MissingIsNoSuchName(t *testing.T) {
	s := serve(t, testOptions())
	pkt, err := get(t, s, gosnmp.Version1, s.Fleet().Name(1), "1.3.6.1.2.1.1.3.0", "1.3.6.1.2.1.31.1.1.1.6.9")
	if err != nil {
		t.Fatal(err)
	}
	if pkt.Error != gosnmp.NoSuchName || pkt.ErrorIndex != 2 {
		t.Errorf("error %v index %d", pkt.Error, pkt.ErrorIndex)
	}
}

func TestSlowDeviceAnswersLaterAndCloseDropsPending(t *testing.T) {
	o := testOptions()
	s := serve(t, o)
	s.Fleet().SetBehavior(5, Behavior{Delay: 100 * time.Millisecond})
	start := time.Now()
	if _, err := get(t, s, gosnmp.Version2c, s.Fleet().Name(5), "1.3.6.1.2.1.1.3.0"); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("answered after %v", d)
	}
	s.Fleet().SetBehavior(5, Behavior{Delay: time.Hour})
	if _, err := get(t, s, gosnmp.Version2c, s.Fleet().Name(5), "1.3.6.1.2.1.1.3.0"); err == nil {
		t.Error("an hour-slow device answered")
	}
	s.Close() // the pending response's timer is stopped (goleak checks)
	s.Close()
}

func TestListenRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:161", ":0"} {
		o := testOptions()
		o.Addr = addr
		if s, err := Listen(o, nil); err == nil {
			s.Close()
			t.Errorf("%s: listening", addr)
		}
	}
}

func TestWriteTargets(t *testing.T) {
	s := serve(t, testOptions())
	var b strings.Builder
	if err := s.Fleet().WriteTargets(&b, s.Addr(), "if-mib:4", "1s", 1); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 102 || lines[1] != "defaults version=2c profile=if-mib:4 timeout=1s retries=1" ||
		lines[2] != fmt.Sprintf("dev00000 %s community=dev00000", s.Addr()) {
		t.Errorf("%q", lines[:3])
	}
}

func TestOptionsAreChecked(t *testing.T) {
	for name, mod := range map[string]func(*Options){
		"devices":   func(o *Options) { o.Devices = 0 },
		"fraction":  func(o *Options) { o.Dead = 1.5 },
		"prefix":    func(o *Options) { o.Prefix = "" },
		"restart":   func(o *Options) { o.Restart, o.RestartEvery = 0.5, 0 },
		"down":      func(o *Options) { o.Down = -0.1 },
		"numbering": func(o *Options) { o.Numbering = 7 },
		"msgsize":   func(o *Options) { o.MaxMessageSize = 483 },
		"bulk":      func(o *Options) { o.MaxBulkVarbinds = -1 },
	} {
		o := testOptions()
		mod(&o)
		if s, err := Listen(o, nil); err == nil {
			s.Close()
			t.Errorf("%s: no error", name)
		}
	}
}

func FuzzAnswer(f *testing.F) {
	o := testOptions()
	s := &Simulator{fleet: newFleet(o), log: slog.New(slog.DiscardHandler)}
	g := &gosnmp.GoSNMP{Version: gosnmp.Version2c, Community: "dev00001"}
	vbs := []gosnmp.SnmpPDU{{Name: "1.3.6.1.2.1.1.3.0", Type: gosnmp.Null}, {Name: "1.3.6.1.2.1.31.1.1.1.1", Type: gosnmp.Null}}
	for _, typ := range []gosnmp.PDUType{gosnmp.GetRequest, gosnmp.GetNextRequest, gosnmp.GetBulkRequest} {
		req, _ := g.SnmpEncodePacket(typ, vbs, 1, 30)
		f.Add(req)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := &gosnmp.GoSNMP{Version: gosnmp.Version2c}
		out, _, ok := s.answer(dec, data)
		if !ok {
			return // no answer, as an agent gives none to what it cannot read
		}
		// An answer is a well-formed SNMP response to the request: it
		// decodes, it is a GetResponse, and it carries the request's id
		// and community.
		in, err := (&gosnmp.GoSNMP{Version: gosnmp.Version2c}).SnmpDecodePacket(data)
		if err != nil {
			t.Fatalf("answered a request that does not decode: %v", err)
		}
		resp, err := (&gosnmp.GoSNMP{Version: gosnmp.Version2c}).SnmpDecodePacket(out)
		if err != nil {
			t.Fatalf("the answer does not decode: %v", err)
		}
		if resp.PDUType != gosnmp.GetResponse || resp.RequestID != in.RequestID || resp.Community != in.Community {
			t.Fatalf("answer %v id %d community %q to request id %d community %q", resp.PDUType, resp.RequestID, resp.Community, in.RequestID, in.Community)
		}
		// It fits the agent's limits.
		if len(out) > o.MaxMessageSize || len(resp.Variables) > max(len(in.Variables), o.MaxBulkVarbinds) {
			t.Fatalf("answer of %d bytes, %d varbinds to a request of %d", len(out), len(resp.Variables), len(in.Variables))
		}
	})
}
