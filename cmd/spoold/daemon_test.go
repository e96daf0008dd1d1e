package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCheckConfigOfTheShippedExamples runs `spoold -t` on the example
// targets and profiles files that operators copy, with their secret files
// made up in a temp dir.
func TestCheckConfigOfTheShippedExamples(t *testing.T) {
	dir := t.TempDir()
	for _, s := range []string{"community", "v3auth", "v3priv"} {
		if err := os.WriteFile(filepath.Join(dir, s), []byte("secret-"+s+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile("../../docs/examples/targets.conf")
	if err != nil {
		t.Fatal(err)
	}
	targets := filepath.Join(dir, "targets.conf")
	os.WriteFile(targets, bytes.ReplaceAll(raw, []byte("file:/etc/spoold/"), []byte("file:"+dir+"/")), 0o600)
	var stdout, stderr bytes.Buffer
	code := run([]string{"-t", "--targets", targets, "--profiles", "../../docs/examples/profiles.conf", "--rrd-dir", t.TempDir()}, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("spoold -t: exit %d\n%s", code, stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "configuration ok: 5 targets") || !strings.Contains(out, "loader-files=100\n") {
		t.Fatalf("spoold -t printed:\n%s", out)
	}
	if strings.Contains(out, "secret-") {
		t.Fatalf("spoold -t printed a secret:\n%s", out)
	}
}

func TestCheckConfigFailsNamingFileAndLine(t *testing.T) {
	targets := filepath.Join(t.TempDir(), "targets.conf")
	os.WriteFile(targets, []byte("a 127.0.0.1 profile=if-mib:2 community=x\nb 127.0.0.1 profile=nope community=x\n"), 0o600)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-t", "--targets", targets}, &stdout, &stderr); code != exitError {
		t.Fatalf("exit %d, want %d", code, exitError)
	}
	if !strings.Contains(stderr.String(), targets+":2") {
		t.Fatalf("error %q does not name %s:2", stderr.String(), targets)
	}
}

func TestDaemonRejectsBadFlags(t *testing.T) {
	for _, args := range []string{"--poll-interval 0s", "--writers 0", "--log-format xml", "--levels 1:2:3:4", "--bogus"} {
		t.Run(args, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(strings.Fields(args), &stdout, &stderr); code != exitUsage {
				t.Fatalf("exit %d, want %d; stderr %s", code, exitUsage, stderr.String())
			}
			flag := strings.TrimPrefix(strings.Fields(args)[0], "--")
			if !strings.Contains(stderr.String(), flag) {
				t.Fatalf("stderr %q does not name --%s", stderr.String(), flag)
			}
		})
	}
}

// TestSIGHUPReloadsTargetsAndKeepsThemOnABadFile adds a target with SIGHUP,
// then sends SIGHUP with a broken file: the daemon keeps the last good
// targets and goes on.
func TestSIGHUPReloadsTargetsAndKeepsThemOnABadFile(t *testing.T) {
	requireRRDTool(t)
	f := startFleet(t, 3)
	raw, _ := os.ReadFile(f.targets)
	lines := strings.SplitAfter(string(raw), "\n")
	two := strings.Join(lines[:len(lines)-2], "") // header, defaults, 2 devices
	os.WriteFile(f.targets, []byte(two), 0o640)
	dir := t.TempDir()
	p := startDaemon(t, daemonArgs(dir, f, "--write-delay", "1h")...)
	targets := func(st map[string]any) int { l, _ := st["targets"].([]any); return len(l) }
	p.waitFor(t, "2 targets", func(st map[string]any) bool { return targets(st) == 2 })

	os.WriteFile(f.targets, raw, 0o640)
	p.cmd.Process.Signal(syscall.SIGHUP)
	p.waitFor(t, "3 targets after SIGHUP", func(st map[string]any) bool { return targets(st) == 3 })

	os.WriteFile(f.targets, []byte("broken line\n"), 0o640)
	p.cmd.Process.Signal(syscall.SIGHUP)
	p.waitFor(t, "the reload error in the log", func(map[string]any) bool {
		return strings.Contains(p.stderr.String(), "reload: keeping the running targets")
	})
	if st := p.status(t); targets(st) != 3 {
		t.Fatalf("%d targets after a bad reload, want the 3 running ones", targets(st))
	}
	if err := p.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("exit after SIGTERM: %v", err)
	}
	if left := spoolEntries(t, dir); len(left) != 0 {
		t.Fatalf("%d entries left after the shutdown flush", len(left))
	}
}

// TestCheckConfigRefusesFilesThatAreNotRegular: `spoold -t` with
// community=file:/dev/zero (memory grew without bound) or a FIFO as
// --targets (it hung) fails at once, naming the file.
func TestCheckConfigRefusesFilesThatAreNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "targets.conf")
	os.WriteFile(zero, []byte("r1 192.0.2.1 profile=host community=file:/dev/zero\n"), 0o600)
	for _, tc := range []struct{ name, targets, bad string }{
		{"secret /dev/zero", zero, "/dev/zero"},
		{"targets FIFO", fifo, fifo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run([]string{"-t", "--targets", tc.targets}, &stdout, &stderr); code != exitError {
				t.Fatalf("exit %d, want %d", code, exitError)
			}
			if msg := stderr.String(); !strings.Contains(msg, tc.bad) || !strings.Contains(msg, "not a regular file") {
				t.Fatalf("error %q does not say %s is not a regular file", msg, tc.bad)
			}
		})
	}
}
