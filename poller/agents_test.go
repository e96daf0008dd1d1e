package poller_test

// Tests against real agents started on 127.0.0.1 with generated configs:
// net-snmp's snmpd (v2c, and v3 with SHA/AES) and snmpsim's snmpsimd.
// scripts/install-deps.sh installs them (Debian: snmpd, snmpsim).

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/internal/testing/snmpsimtest"
	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/spool"
)

// needBinary returns an agent's path, or ends the test (testenv.Missing).
func needBinary(t *testing.T, name string) string {
	t.Helper()
	return testenv.LookPath(t, name, "the real-agent tests run it")
}

// startAgent runs cmd until the end of the test, or until stop (SIGTERM,
// then a wait; safe to call twice), and waits until it answers a v2c Get
// of sysUpTime with community.
func startAgent(t *testing.T, cmd *exec.Cmd, port int, community, logPath string) (stop func()) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	showLog := func() string {
		log, _ := os.ReadFile(logPath)
		return fmt.Sprintf("%s log:\n%s", filepath.Base(cmd.Path), log)
	}
	var once sync.Once
	end := func(sig os.Signal) {
		once.Do(func() {
			_ = cmd.Process.Signal(sig)
			<-exited
		})
	}
	t.Cleanup(func() {
		end(os.Kill)
		if t.Failed() {
			t.Log(showLog())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("%s exited: %v", filepath.Base(cmd.Path), err)
		default:
		}
		if _, err := getV2c(port, community, poller.OIDSysUpTime); err == nil {
			return func() { end(syscall.SIGTERM) }
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer on 127.0.0.1:%d within 20s", filepath.Base(cmd.Path), port)
		}
		time.Sleep(50 * time.Millisecond) // waiting for a process to come up
	}
}

func getV2c(port int, community string, oids ...string) (*gosnmp.SnmpPacket, error) {
	g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: uint16(port), Community: community,
		Version: gosnmp.Version2c, Timeout: 200 * time.Millisecond, Retries: 0}
	if err := g.Connect(); err != nil {
		return nil, err
	}
	defer g.Close()
	return g.Get(oids)
}

const (
	v3User     = "spoolv3"
	v3AuthPass = "auth-pass-123"
	v3PrivPass = "priv-pass-456"
	// usmStatsUnknownEngineIDs counts engine discoveries; usmStatsNotInTimeWindows time resyncs.
	oidUnknownEngineIDs = "1.3.6.1.6.3.15.1.1.4.0"
	oidNotInTimeWindows = "1.3.6.1.6.3.15.1.1.2.0"
)

// startSnmpd runs net-snmp's snmpd with a v2c community "public" and a v3
// user with SHA/AES, all state in a temporary directory.
func startSnmpd(t *testing.T) int {
	port := snmpsimtest.FreeUDPPort(t)
	startSnmpdIn(t, t.TempDir(), port)
	return port
}

// startSnmpdIn runs startSnmpd's snmpd on port with its configuration and
// its persistent state (engine ID, boots) in dir: started again in the
// same dir after stop, it is the same SNMP engine, rebooted.
func startSnmpdIn(t *testing.T, dir string, port int) (stop func()) {
	bin := needBinary(t, "snmpd")
	conf := fmt.Sprintf(`agentaddress udp:127.0.0.1:%d
rocommunity public 127.0.0.1
rouser %s priv
createUser %s SHA "%s" AES "%s"
`, port, v3User, v3User, v3AuthPass, v3PrivPass)
	confPath, persist := filepath.Join(dir, "snmpd.conf"), filepath.Join(dir, "persist")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "snmpd.log")
	// -f: foreground; -c and SNMPCONFPATH: only our config and the
	// persistent state, saved at a stop; -M /dev/null: no MIB files.
	cmd := exec.Command(bin, "-f", "-Lf", logPath, "-c", confPath, "-p", filepath.Join(dir, "pid"), "-M", "/dev/null")
	cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+persist, "SNMPCONFPATH="+persist)
	return startAgent(t, cmd, port, "public", logPath)
}

func parseOne(t *testing.T, line string) []*fleet.Target {
	t.Helper()
	ts, err := fleet.ParseTargets(strings.NewReader(line), "agents.targets", nil)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// pollOnce runs one cycle of targets and returns its stats and the entry of
// the first target.
func pollOnce(t *testing.T, p *poller.Poller, sp *spool.Spool, now time.Time) (poller.CycleStats, spool.Entry) {
	t.Helper()
	st := p.Cycle(context.Background())
	if st.OK == 0 {
		return st, spool.Entry{}
	}
	all := spooled(t, sp, p.Statuses()[0].Name)
	if e := all[len(all)-1]; e.Time >= now.Unix() {
		return st, e
	}
	t.Fatalf("no entry polled at or after %v", now)
	return st, spool.Entry{}
}

func TestSnmpdHostProfile(t *testing.T) {
	port := startSnmpd(t)
	for _, tc := range []struct{ name, opts string }{
		{"v2c", "community=public"},
		{"v1", "version=1 community=public"},
		{"v3-SHA-AES", fmt.Sprintf("version=3 user=%s auth=SHA auth-pass=%s priv=AES priv-pass=%s", v3User, v3AuthPass, v3PrivPass)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := openSpool(t)
			c := newClock()
			po := pollOptions()
			po.Now = c.Now
			ts := parseOne(t, fmt.Sprintf("snmpd 127.0.0.1:%d profile=host timeout=2s %s", port, tc.opts))
			p, err := poller.New(po, ts, sp, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			st, e := pollOnce(t, p, sp, c.Now())
			if st.OK != 1 || st.Unknown != 0 {
				s, _ := p.Status("snmpd")
				t.Fatalf("%+v: %s", st, s.LastError)
			}
			prof := fleet.HostProfile()
			for k, v := range e.Values {
				want := spool.Gauge
				if prof.DS[k].Type != rrd.Gauge {
					want = spool.Counter
				}
				if v.Type != want || v.Name != prof.DS[k].Name {
					t.Errorf("value %d: %+v, want a %v named %s", k, v, want, prof.DS[k].Name)
				}
			}
			if mem := e.Values[7].Gauge; mem <= 0 {
				t.Errorf("mem_total %v", mem)
			}
			// The agent just started: its first sample is flagged.
			if e.Flags&spool.FlagDiscontinuity == 0 {
				t.Errorf("first sample of a fresh agent: flags %d", e.Flags)
			}
		})
	}
}

func TestSnmpdV3KeepsEngineState(t *testing.T) {
	port := startSnmpd(t)
	sp := openSpool(t)
	c := newClock()
	po := pollOptions()
	po.Now = c.Now
	po.BackoffAfter = 10 // the device with the wrong password is polled every cycle
	line := fmt.Sprintf("v3 127.0.0.1:%d profile=if-mib:1 version=3 user=%s auth=SHA auth-pass=%s priv=AES priv-pass=%s\n",
		port, v3User, v3AuthPass, v3PrivPass)
	line += fmt.Sprintf("v3-wrong 127.0.0.1:%d profile=if-mib:1 version=3 user=%s auth=SHA auth-pass=not-the-pass priv=AES priv-pass=%s timeout=300ms retries=0\n",
		port, v3User, v3PrivPass)
	p, err := poller.New(po, parseOne(t, line), sp, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	discoveries := func() uint {
		pkt, err := getV2c(port, "public", oidUnknownEngineIDs, oidNotInTimeWindows)
		if err != nil {
			t.Fatal(err)
		}
		if nt := pkt.Variables[1].Value.(uint); nt != 0 {
			t.Errorf("%d time-window resyncs", nt)
		}
		return pkt.Variables[0].Value.(uint)
	}
	before := discoveries()
	for cycle := range 3 {
		c.Advance(5 * time.Minute)
		st := p.Cycle(context.Background())
		if st.OK != 1 || st.Failed != 1 {
			t.Fatalf("cycle %d: %+v", cycle, st)
		}
	}
	// Each device discovered the engine once (the one with the wrong
	// password too), then kept its state.
	if n := discoveries() - before; n != 2 {
		t.Errorf("%d engine discoveries in 3 cycles of 2 devices, want 2", n)
	}
	s, _ := p.Status("v3-wrong")
	if s.LastError == "" || strings.Contains(s.LastError, "not-the-pass") || strings.Contains(s.LastError, v3PrivPass) {
		t.Errorf("wrong password: error %q", s.LastError)
	}
}

// startSnmpsim runs snmpsimd with one data file; its name is the community.
func startSnmpsim(t *testing.T, community, snmprec string) int {
	return startSnmpsimFiles(t, map[string]string{community: snmprec})
}

// startSnmpsimFiles runs snmpsimd with data files by community (the
// first community in sort order is the one waited for).
func startSnmpsimFiles(t *testing.T, files map[string]string) int {
	b := make(map[string][]byte, len(files))
	for c, text := range files {
		b[c] = []byte(text)
	}
	return snmpsimtest.Start(t, b).Port
}

// The snmpsim data file: sysUpTime and counters move with time (numeric
// variation module); ifInOctets.1 wraps every 3 seconds.
const snmprec = `1.3.6.1.2.1.1.3.0|67:numeric|rate=100,initial=0
1.3.6.1.2.1.2.2.1.8.1|2|1
1.3.6.1.2.1.2.2.1.10.1|65:numeric|rate=1000,initial=0,max=3000,wrap=1
1.3.6.1.2.1.2.2.1.14.1|65|5
1.3.6.1.2.1.31.1.1.1.6.1|70:numeric|rate=1000000,initial=1000
1.3.6.1.2.1.31.1.1.1.10.1|70|12345678901234
1.3.6.1.2.1.31.1.1.1.15.1|66|1000
`

const simProfile = `profile snmpsim
ds in32   1.3.6.1.2.1.2.2.1.10.1    COUNTER 0 U
ds errors 1.3.6.1.2.1.2.2.1.14.1    DERIVE  0 U
ds in64   1.3.6.1.2.1.31.1.1.1.6.1  COUNTER 0 U
ds out64  1.3.6.1.2.1.31.1.1.1.10.1 COUNTER
ds speed  1.3.6.1.2.1.31.1.1.1.15.1 GAUGE
ds status 1.3.6.1.2.1.2.2.1.8.1     GAUGE 1 7
ds uptime 1.3.6.1.2.1.1.3.0         GAUGE
ds absent 1.3.6.1.2.1.31.1.1.1.6.2  COUNTER
`

func TestSnmpsimCountersAndWrap(t *testing.T) {
	port := startSnmpsim(t, "spooltest", snmprec)
	profiles, err := fleet.ParseProfiles(strings.NewReader(simProfile), "snmpsim.profiles")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := fleet.ParseTargets(strings.NewReader(fmt.Sprintf("snmpsim 127.0.0.1:%d profile=snmpsim community=spooltest", port)), "t", profiles)
	if err != nil {
		t.Fatal(err)
	}
	sp := openSpool(t)
	po := pollOptions()
	po.Now = time.Now // the agent's clock is the real one
	p, err := poller.New(po, ts, sp, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var prev spool.Entry
	wrapped := false
	deadline := time.Now().Add(15 * time.Second)
	for n := 0; !wrapped; n++ {
		if time.Now().After(deadline) {
			t.Fatal("no wrap of a counter that wraps every 3 s within 15 s")
		}
		st, e := pollOnce(t, p, sp, time.Now())
		if st.OK != 1 || st.Unknown != 1 {
			s, _ := p.Status("snmpsim")
			t.Fatalf("poll %d: %+v %s", n, st, s.LastError)
		}
		want := []spool.Value{
			{Name: "in32", Type: spool.Counter, Counter: e.Values[0].Counter},
			{Name: "errors", Type: spool.Counter, Counter: 5},
			{Name: "in64", Type: spool.Counter, Counter: e.Values[2].Counter},
			{Name: "out64", Type: spool.Counter, Counter: 12345678901234},
			{Name: "speed", Type: spool.Gauge, Gauge: 1000},
			{Name: "status", Type: spool.Gauge, Gauge: 1},
			{Name: "uptime", Type: spool.Gauge, Gauge: e.Values[6].Gauge},
			{Name: "absent", Type: spool.Unknown},
		}
		for k := range want {
			if e.Values[k] != want[k] {
				t.Errorf("poll %d: value %+v, want %+v", n, e.Values[k], want[k])
			}
		}
		if e.Values[0].Counter >= 3000 || e.Values[2].Counter < 1000 {
			t.Errorf("poll %d: counters %d, %d out of range", n, e.Values[0].Counter, e.Values[2].Counter)
		}
		if n > 0 {
			if e.Flags != 0 {
				t.Errorf("poll %d: flags %d (a wrap is not a restart)", n, e.Flags)
			}
			if e.Values[2].Counter < prev.Values[2].Counter {
				t.Errorf("poll %d: in64 went back", n)
			}
			wrapped = e.Values[0].Counter < prev.Values[0].Counter
		}
		prev = e
		// The agent's counters move with its real clock; the spool keeps
		// one entry per target and second, so poll in the next second.
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 20*time.Millisecond)))
	}
}

// TestSnmpdClientsKeepNothingOfTheirLastTarget: one poll at a time, so a
// poll's gosnmp client is the one the poll before used, of every SNMP
// version in turn, each credential right and wrong. A client takes
// nothing from its last target: every right one is answered and every
// wrong one refused, cycle after cycle, whichever target went before.
func TestSnmpdClientsKeepNothingOfTheirLastTarget(t *testing.T) {
	port := startSnmpd(t)
	po := pollOptions()
	po.Concurrency = 1
	po.BackoffAfter = 10 // the wrong ones are polled every cycle
	v3 := func(auth string) string {
		return fmt.Sprintf("version=3 user=%s auth=SHA auth-pass=%s priv=AES priv-pass=%s", v3User, auth, v3PrivPass)
	}
	var lines strings.Builder
	for _, tc := range []struct{ name, opts string }{
		{"v2c", "community=public"},
		{"v1-wrong", "version=1 community=not-public"},
		{"v3", v3(v3AuthPass)},
		{"v2c-wrong", "community=not-public"},
		{"v1", "version=1 community=public"},
		{"v3-wrong", v3("not-the-pass")},
	} {
		fmt.Fprintf(&lines, "%s 127.0.0.1:%d profile=if-mib:1 timeout=300ms retries=0 %s\n", tc.name, port, tc.opts)
	}
	p, err := poller.New(po, parseOne(t, lines.String()), openSpool(t), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for cycle := range 4 {
		if st := p.Cycle(context.Background()); st.OK != 3 || st.Failed != 3 {
			t.Errorf("cycle %d: %d answered, %d failed; want 3 and 3", cycle, st.OK, st.Failed)
		}
		for _, s := range p.Statuses() {
			if wrong := strings.HasSuffix(s.Name, "-wrong"); wrong != (s.LastError != "") {
				t.Errorf("cycle %d: %s: last error %q", cycle, s.Name, s.LastError)
			}
		}
	}
}
