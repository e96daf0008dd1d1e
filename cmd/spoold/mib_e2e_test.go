package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// brokenMIB is a vendor module cut short: its last OID has no closing
// brace.
const brokenMIB = `BROKEN-MIB DEFINITIONS ::= BEGIN
IMPORTS OBJECT-TYPE, enterprises, Integer32 FROM SNMPv2-SMI;
broken OBJECT IDENTIFIER ::= { enterprises 4244 }
brokenTemp OBJECT-TYPE
    SYNTAX      Integer32
    MAX-ACCESS  read-only
    STATUS      current
    DESCRIPTION "cut short"
    ::= { broken 1
END
`

// TestBrokenMIBIsReportedAndCounted: a --mib-dir file that does not parse
// is an error naming the file at `spoold -t`; the daemon logs it, counts
// it on /metrics (spoold_mib_file_errors_total) and runs, and counts it
// again at the reload of SIGHUP.
func TestBrokenMIBIsReportedAndCounted(t *testing.T) {
	mibs := t.TempDir()
	file := filepath.Join(mibs, "broken.my")
	if err := os.WriteFile(file, []byte(brokenMIB), 0o644); err != nil {
		t.Fatal(err)
	}
	// The parser takes END for an arc of the OID and fails at the end of
	// the file, on the line after END.
	where := fmt.Sprintf("%s line %d", file, strings.Count(brokenMIB, "\n")+1)
	var stdout, stderr bytes.Buffer
	code := run([]string{"-t", "--targets", okTargets(t), "--rrd-dir", t.TempDir(), "--mib-dir", mibs}, &stdout, &stderr)
	if code == exitOK || !strings.Contains(stderr.String(), "--mib-dir") || !strings.Contains(stderr.String(), where) {
		t.Fatalf("spoold -t: exit %d, stderr %q; want a failure naming --mib-dir and %s", code, stderr.String(), where)
	}

	dir := t.TempDir()
	f := startFleet(t, 1)
	p := startDaemon(t, daemonArgs(dir, f, "--mib-dir", mibs)...)
	waitMetric(t, p, "spoold_mib_file_errors_total 1")
	if !strings.Contains(p.stderr.String(), file) {
		t.Errorf("the log does not name %s:\n%s", file, p.stderr)
	}
	p.cmd.Process.Signal(syscall.SIGHUP)
	waitMetric(t, p, "spoold_mib_file_errors_total 2")
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}

// waitMetric polls /metrics until it has the line want, failing after a
// deadline.
func waitMetric(t *testing.T, p *daemonProc, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		body := string(get(t, p.admin+"/metrics"))
		if strings.Contains(body, "\n"+want+"\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics has no line %q:\n%s\n%s", want, body, p.stderr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// vendorMIB is a small SMIv2 module of a vendor, importing from SNMPv2-SMI.
const vendorMIB = `ACME-ENV-MIB DEFINITIONS ::= BEGIN
IMPORTS MODULE-IDENTITY, OBJECT-TYPE, enterprises, Integer32 FROM SNMPv2-SMI;
acmeEnv MODULE-IDENTITY
    LAST-UPDATED "202611250000Z"
    ORGANIZATION "Acme"
    CONTACT-INFO "noc@acme.example"
    DESCRIPTION  "Environment."
    ::= { enterprises 99996 }
acmeEnvTemperature OBJECT-TYPE
    SYNTAX      Integer32
    MAX-ACCESS  read-only
    STATUS      current
    DESCRIPTION "The temperature."
    ::= { acmeEnv 1 }
END
`

// TestProfileUsesAVendorMIBName: a profile may name a vendor's object of
// a --mib-dir file; without the directory the name is an error naming
// the profiles file, its line and the name.
func TestProfileUsesAVendorMIBName(t *testing.T) {
	dir := t.TempDir()
	mibs := filepath.Join(dir, "mibs")
	files := map[string]string{
		filepath.Join(mibs, "acme-env.my"):  vendorMIB,
		filepath.Join(dir, "profiles.conf"): "profile env\nds temp ACME-ENV-MIB::acmeEnvTemperature.0 GAUGE\nds uptime sysUpTime.0 GAUGE\n",
		filepath.Join(dir, "targets.conf"):  "r1 127.0.0.1 profile=env community=x\n",
	}
	if err := os.Mkdir(mibs, 0o755); err != nil {
		t.Fatal(err)
	}
	for path, text := range files {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"-t", "--targets", filepath.Join(dir, "targets.conf"), "--profiles", filepath.Join(dir, "profiles.conf"), "--rrd-dir", t.TempDir()}
	var stdout, stderr bytes.Buffer
	if code := run(append(args, "--mib-dir", mibs), &stdout, &stderr); code != exitOK {
		t.Fatalf("with --mib-dir: exit %d: %s", code, stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	code := run(args, &stdout, &stderr)
	for _, want := range []string{filepath.Join(dir, "profiles.conf") + ":2:", `"ACME-ENV-MIB::acmeEnvTemperature.0"`, "module ACME-ENV-MIB"} {
		if code == exitOK || !strings.Contains(stderr.String(), want) {
			t.Errorf("without --mib-dir: exit %d, stderr %q: want a failure naming %q", code, stderr.String(), want)
		}
	}
}

// TestMIBDirFilesThatAreNotRegular: a FIFO in --mib-dir hung `spoold -t`
// and the start; one added while running hung the reload of SIGHUP, and a
// later SIGHUP that added a target was never applied, with nothing logged.
// Now `-t` fails at once naming the FIFO, the daemon starts and logs it,
// and a SIGHUP with a FIFO added applies the new target and logs the FIFO.
func TestMIBDirFilesThatAreNotRegular(t *testing.T) {
	mibs := t.TempDir()
	fifo := filepath.Join(mibs, "stuck.my")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	exited := make(chan int, 1)
	var stdout, stderr bytes.Buffer
	go func() {
		exited <- run([]string{"-t", "--targets", okTargets(t), "--rrd-dir", t.TempDir(), "--mib-dir", mibs}, &stdout, &stderr)
	}()
	select {
	case code := <-exited:
		if code != exitError || !strings.Contains(stderr.String(), "--mib-dir") || !strings.Contains(stderr.String(), fifo+": not a regular file but a FIFO") {
			t.Fatalf("spoold -t: exit %d, stderr %q; want a failure naming --mib-dir and %s", code, stderr.String(), fifo)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("spoold -t still runs after 10s with a FIFO in --mib-dir")
	}

	f := startFleet(t, 2)
	raw, _ := os.ReadFile(f.targets)
	lines := strings.SplitAfter(string(raw), "\n")
	os.WriteFile(f.targets, []byte(strings.Join(lines[:len(lines)-2], "")), 0o640) // one device
	p := startDaemon(t, daemonArgs(t.TempDir(), f, "--mib-dir", mibs, "--write-delay", "1h")...)
	targets := func(st map[string]any) int { l, _ := st["targets"].([]any); return len(l) }
	p.waitFor(t, "1 target", func(st map[string]any) bool { return targets(st) == 1 })
	if !strings.Contains(p.stderr.String(), fifo) {
		t.Errorf("the start's log does not name %s:\n%s", fifo, p.stderr)
	}
	added := filepath.Join(mibs, "added.my")
	if err := syscall.Mkfifo(added, 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(f.targets, raw, 0o640) // both devices
	p.cmd.Process.Signal(syscall.SIGHUP)
	p.waitFor(t, "2 targets after SIGHUP", func(st map[string]any) bool { return targets(st) == 2 })
	p.waitFor(t, "the FIFO in the log", func(map[string]any) bool { return strings.Contains(p.stderr.String(), added) })
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
}
