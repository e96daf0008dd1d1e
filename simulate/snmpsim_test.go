package simulate

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// startSnmpsim runs snmpsimd serving device i of f as it is at t (its
// community the device's name) on a free loopback port until the test
// ends, and returns the port once it answers.
func startSnmpsim(tb testing.TB, f *Fleet, i int, t time.Time) int {
	tb.Helper()
	bin := testenv.LookPath(tb, "snmpsimd", "the peer agent serving a simulated device's walk")
	dir, err := os.MkdirTemp("", "spoold-snmpsim-") // not tb.TempDir: snmpsimd runs as nobody
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	data, cache := filepath.Join(dir, "data"), filepath.Join(dir, "cache")
	var rec bytes.Buffer
	if err := f.WriteSnmprec(&rec, i, t); err != nil {
		tb.Fatal(err)
	}
	for _, d := range []string{data, cache} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			tb.Fatal(err)
		}
		_ = os.Chmod(d, 0o777)
	}
	_ = os.Chmod(dir, 0o755)
	if err := os.WriteFile(filepath.Join(data, f.Name(i)+".snmprec"), rec.Bytes(), 0o644); err != nil {
		tb.Fatal(err)
	}
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	port := c.LocalAddr().(*net.UDPAddr).Port
	c.Close()
	args := []string{"--data-dir=" + data, "--cache-dir=" + cache,
		fmt.Sprintf("--agent-udpv4-endpoint=127.0.0.1:%d", port), "--logging-method=null"}
	if os.Geteuid() == 0 {
		args = append(args, "--process-user=nobody", "--process-group=nogroup")
	}
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: uint16(port), Community: f.Name(i), Version: gosnmp.Version2c,
		Timeout: 200 * time.Millisecond, Retries: 0}
	if err := g.Connect(); err != nil {
		tb.Fatal(err)
	}
	defer g.Conn.Close()
	for deadline := time.Now().Add(60 * time.Second); ; {
		if pkt, err := g.Get([]string{"1.3.6.1.2.1.1.5.0"}); err == nil && pkt.Variables[0].Type == gosnmp.OctetString {
			return port
		}
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			tb.Fatalf("snmpsimd on port %d does not answer: %s", port, out.String())
		}
	}
}

// TestSnmpsimServesTheWrittenDevice: snmpsimd, given the data file
// WriteSnmprec wrote, serves what the device serves.
func TestSnmpsimServesTheWrittenDevice(t *testing.T) {
	o := gearOptions()
	f := newFleet(o)
	f.SetBehavior(1, Behavior{NoHC: true})
	port := startSnmpsim(t, f, 1, o.Now())
	g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: uint16(port), Community: f.Name(1), Version: gosnmp.Version2c,
		Timeout: 5 * time.Second, Retries: 1, MaxRepetitions: 25}
	if err := g.Connect(); err != nil {
		t.Fatal(err)
	}
	defer g.Conn.Close()
	got, err := g.BulkWalkAll("1.3.6.1")
	if err != nil {
		t.Fatal(err)
	}
	if err := sameVarbinds(got, f.Walk(1, "1.3.6.1", o.Now())); err != nil {
		t.Error(err)
	}
}
