// Package snmpsimtest runs snmpsim's snmpsimd for tests, serving snmprec
// data files (each file's community is its name without .snmprec), and
// holds the project's recordings of the shapes real agents give their
// IF-MIB tables (testdata/), with the ports the built-in if-mib profile
// must find in each. It starts snmpsimd as a child process and a goroutine
// that waits for it, both ended when the test ends.
package snmpsimtest

import (
	"embed"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/spoold/spoold/internal/testing/testenv"
)

//go:embed testdata/*.snmprec
var recordings embed.FS

// Recording returns the text of the recording name (testdata/name.snmprec).
func Recording(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := recordings.ReadFile("testdata/" + name + ".snmprec")
	if err != nil {
		tb.Fatalf("recording %s: %v", name, err)
	}
	return b
}

// Agent is a running snmpsimd on 127.0.0.1.
type Agent struct {
	Port     int
	data     string
	replaced int
}

// Start runs snmpsimd on a free loopback port with the data files files
// (community → snmprec text) until the test ends, and returns once it
// answers a Get of sysUpTime.0 with the first community in sort order.
func Start(tb testing.TB, files map[string][]byte) *Agent {
	tb.Helper()
	bin := testenv.LookPath(tb, "snmpsimd", "it serves the recorded agents")
	// Not tb.TempDir: its parent is 0700, and snmpsimd runs as nobody.
	dir, err := os.MkdirTemp("", "spoold-snmpsim-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	a := &Agent{data: filepath.Join(dir, "data")}
	cache := filepath.Join(dir, "cache")
	for _, d := range []string{a.data, cache} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			tb.Fatal(err)
		}
		_ = os.Chmod(d, 0o777) // snmpsimd drops privileges before it indexes
	}
	_ = os.Chmod(dir, 0o755)
	communities := make([]string, 0, len(files))
	for c, text := range files {
		communities = append(communities, c)
		if err := writeReadable(filepath.Join(a.data, c+".snmprec"), text); err != nil {
			tb.Fatal(err)
		}
	}
	sort.Strings(communities)
	a.Port = FreeUDPPort(tb)
	args := []string{"--data-dir=" + a.data, "--cache-dir=" + cache,
		fmt.Sprintf("--agent-udpv4-endpoint=127.0.0.1:%d", a.Port), "--logging-method=stderr"}
	if os.Geteuid() == 0 {
		args = append(args, "--process-user=nobody", "--process-group=nogroup")
	}
	logPath := filepath.Join(dir, "snmpsimd.log")
	logFile, err := os.Create(logPath) // written by this process: snmpsimd drops privileges
	if err != nil {
		tb.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if tb.Failed() {
			log, _ := os.ReadFile(logPath)
			tb.Logf("snmpsimd log:\n%s", log)
		}
	})
	for deadline := time.Now().Add(60 * time.Second); ; {
		select {
		case err := <-exited:
			exited <- err
			log, _ := os.ReadFile(logPath)
			tb.Fatalf("snmpsimd exited: %v\n%s", err, log)
		default:
		}
		if answers(a.Port, communities[0]) {
			return a
		}
		if time.Now().After(deadline) {
			tb.Fatalf("snmpsimd did not answer on 127.0.0.1:%d within 60s", a.Port)
		}
		time.Sleep(50 * time.Millisecond) // waiting for a process to come up
	}
}

// Replace serves text for community from the next request on. snmpsimd
// indexes a data file again when its modification time changes to one
// after its index's, so the file gets one in the future.
func (a *Agent) Replace(tb testing.TB, community string, text []byte) {
	tb.Helper()
	path := filepath.Join(a.data, community+".snmprec")
	if err := writeReadable(path+".new", text); err != nil {
		tb.Fatal(err)
	}
	a.replaced++
	mtime := time.Now().Add(time.Hour + time.Duration(a.replaced)*time.Second)
	if err := os.Chtimes(path+".new", mtime, mtime); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		tb.Fatal(err)
	}
}

// writeReadable writes a recording snmpsimd, which drops its privileges,
// can read whatever this process's umask is (a daemon started in the test
// process, as some tests do, adds 027 to it for good).
func writeReadable(path string, text []byte) error {
	if err := os.WriteFile(path, text, 0o644); err != nil {
		return err
	}
	return os.Chmod(path, 0o644)
}

func answers(port int, community string) bool {
	g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: uint16(port), Community: community,
		Version: gosnmp.Version2c, Timeout: 200 * time.Millisecond, Retries: 0}
	if err := g.Connect(); err != nil {
		return false
	}
	defer g.Close()
	pkt, err := g.Get([]string{"1.3.6.1.2.1.1.3.0"})
	return err == nil && len(pkt.Variables) == 1 && pkt.Variables[0].Type == gosnmp.TimeTicks
}

// FreeUDPPort returns a loopback UDP port that was free a moment ago, for
// an agent a test starts on it.
func FreeUDPPort(tb testing.TB) int {
	tb.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).Port
}
