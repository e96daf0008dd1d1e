package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/syslog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// startBound is how long a detached start may take before a test calls it
// hung: a daemon built with -race starting on a loaded 2-core machine
// serves in a few seconds; one that never detaches never returns.
const startBound = 60 * time.Second

// spooldBinary is this test binary, which acts as spoold with childEnv.
func spooldBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// runBounded runs cmd (in a process group of its own) for at most
// startBound and returns its combined output and error. Whatever is left
// of its group is killed at the test's end; a daemon that detached is
// not in it (see killPidFile).
func runBounded(t *testing.T, name string, args []string, env []string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A daemon that kept the command's output pipe open would hold Wait
	// beyond the bound: it must not (its stdio is /dev/null).
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	err := cmd.Wait()
	if ctx.Err() != nil {
		return out.String(), fmt.Errorf("did not return within %s (the daemon did not detach): %w", startBound, err)
	}
	return out.String(), err
}

// pidFromFile reads a pid file.
func pidFromFile(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("pid file %s holds %q", path, b)
	}
	return pid
}

// killPidFile kills, at the test's end, the process the pid file names
// when the test starts it, should the test not have stopped it.
func killPidFile(t *testing.T, path string) {
	t.Cleanup(func() {
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
}

// procStat is a process's state and session id from /proc/PID/stat, and
// whether it exists (a zombie does not count).
func procStat(pid int) (state string, sid int, alive bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, false
	}
	// pid (comm) state ppid pgrp session ...: comm may hold spaces.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	sid, _ = strconv.Atoi(f[3])
	return f[0], sid, f[0] != "Z" && f[0] != "X"
}

// waitGone waits until pid has exited.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(startBound)
	for {
		if _, _, alive := procStat(pid); !alive {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still runs %s after SIGTERM", pid, startBound)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestRRDCachedDetachesForAScript: a script that starts `spoold rrdcached`
// without -g, as rrdtool's test suite starts rrdcached, goes on at once:
// the command returns 0 once the socket serves, the pid file holds the
// daemon in a session of its own, its stdin, stdout and stderr on
// /dev/null, which logs to -o's file, rrdtool
// --daemon writes through it, and
// a second start on the same journal directory fails with the daemon's
// error while the first serves on.
func TestRRDCachedDetachesForAScript(t *testing.T) {
	requireRRDTool(t)
	dir := t.TempDir()
	pidFile, sock := filepath.Join(dir, "rrdcached.pid"), filepath.Join(dir, "rrdcached.sock")
	base, journal, logFile := filepath.Join(dir, "db"), filepath.Join(dir, "journal"), filepath.Join(dir, "rrdcached.log")
	killPidFile(t, pidFile)
	script := `"$SPOOLD" rrdcached -p "$P" -l "unix:$S" -b "$B" -j "$J" -o "$O" -- --admin-listen 127.0.0.1:0 || exit
rrdtool create "$B/s.rrd" --daemon "unix:$S" -s 10 -b 1700000000 DS:a:GAUGE:20:U:U RRA:LAST:0.5:1:10
rrdtool update "$B/s.rrd" --daemon "unix:$S" 1700000010:42
echo the script went on`
	out, err := runBounded(t, "/bin/sh", []string{"-c", script}, []string{"SPOOLD=" + spooldBinary(t),
		"P=" + pidFile, "S=" + sock, "B=" + base, "J=" + journal, "O=" + logFile})
	if err != nil || !strings.Contains(out, "the script went on") {
		t.Fatalf("script: %v\n%s", err, out)
	}
	pid := pidFromFile(t, pidFile)
	if _, sid, alive := procStat(pid); !alive || sid != pid {
		t.Fatalf("pid file's process %d: alive %v, session %d (want its own, %d)", pid, alive, sid, pid)
	}
	for fd := 0; fd <= 2; fd++ {
		if to, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", pid, fd)); err != nil || to != os.DevNull {
			t.Errorf("the daemon's fd %d is %q (%v), want %s", fd, to, err, os.DevNull)
		}
	}
	if b, err := os.ReadFile(logFile); err != nil || !bytes.Contains(b, []byte(`msg="spoold started"`)) || !bytes.Contains(b, []byte(fmt.Sprintf("pid=%d", pid))) {
		t.Errorf("-o's log file: %v, want the daemon's start logged with pid %d:\n%s", err, pid, b)
	}
	checkUpdateFetch(t, "unix:"+sock, base)
	if got := rrdtoolOut(t, "lastupdate", filepath.Join(base, "s.rrd"), "--daemon", "unix:"+sock); !strings.Contains(got, "1700000010: 42") {
		t.Errorf("the script's update: lastupdate says %q", got)
	}

	out, err = runBounded(t, spooldBinary(t), []string{"rrdcached", "-p", filepath.Join(dir, "second.pid"),
		"-l", "unix:" + filepath.Join(dir, "second.sock"), "-b", base, "-j", journal, "--", "--admin-listen", "127.0.0.1:0"}, nil)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(out, "ended before it served its sockets") || !strings.Contains(out, journal) {
		t.Errorf("a second start on the same journal directory: %v, want a non-zero exit naming %s:\n%s", err, journal, out)
	}
	if _, _, alive := procStat(pid); !alive {
		t.Fatalf("the first daemon died at the second start")
	}

	syscall.Kill(pid, syscall.SIGTERM)
	waitGone(t, pid)
	if _, err := os.Stat(pidFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pid file after the stop: %v", err)
	}
}

// TestRRDCachedDetachFailure: a daemon that cannot start (its socket in a
// directory that does not exist) makes `spoold rrdcached` exit non-zero
// with the daemon's error, promptly, and leaves no pid file and no daemon.
func TestRRDCachedDetachFailure(t *testing.T) {
	dir := t.TempDir()
	pidFile, sock := filepath.Join(dir, "rrdcached.pid"), filepath.Join(dir, "missing", "rrdcached.sock")
	out, err := runBounded(t, spooldBinary(t), []string{"rrdcached", "-p", pidFile, "-l", "unix:" + sock,
		"-b", filepath.Join(dir, "db"), "-j", filepath.Join(dir, "journal"), "--", "--admin-listen", "127.0.0.1:0"}, nil)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitError {
		t.Fatalf("exit: %v, want status %d\n%s", err, exitError, out)
	}
	for _, want := range []string{`msg="start spoold"`, sock, "ended before it served its sockets: exit status 1"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(pidFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pid file after a failed start: %v", err)
	}
}

// debianDefaults writes a copy of the installed /etc/default/rrdcached
// with DAEMON and the paths it names moved under dir, everything else as
// it is, and returns its path and the values it sets.
func debianDefaults(t *testing.T, dir, daemon string) (string, map[string]string) {
	t.Helper()
	testenv.LookPath(t, "rrdcached", "its package ships /etc/default/rrdcached and /etc/init.d/rrdcached")
	b, err := os.ReadFile("/etc/default/rrdcached")
	if err != nil {
		t.Fatal(err)
	}
	moved := map[string]string{"DAEMON": daemon}
	vals := map[string]string{}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, "=")
		if ok && !strings.HasPrefix(k, "#") {
			v = strings.Trim(v, `"`)
			switch k {
			case "BASE_PATH", "JOURNAL_PATH", "PIDFILE", "SOCKFILE":
				moved[k] = filepath.Join(dir, v)
			}
			if m, ok := moved[k]; ok {
				v, l = m, k+"="+m
			}
			vals[k] = v
		}
		lines = append(lines, l)
	}
	for _, k := range []string{"DAEMON", "BASE_PATH", "JOURNAL_PATH", "PIDFILE", "SOCKFILE", "BASE_OPTIONS"} {
		if _, ok := vals[k]; !ok {
			t.Fatalf("/etc/default/rrdcached sets no %s", k)
		}
	}
	path := filepath.Join(dir, "default-rrdcached")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, vals
}

// rrdcachedDaemon is what the test gives Debian's init script as DAEMON:
// a script named rrdcached that runs a link named rrdcached to spoold
// (this test binary), as an operator's DAEMON is, with the options given
// and the admin server on a free port (--admin-listen 127.0.0.1:0) rather
// than spoold's 127.0.0.1:8780, which something else on the machine may
// hold. The daemon's process name is the link's, rrdcached, as the init
// script's stop (start-stop-daemon --name rrdcached) needs.
func rrdcachedDaemon(t *testing.T, dir string) string {
	t.Helper()
	link, daemon := filepath.Join(dir, "link", "rrdcached"), filepath.Join(dir, "bin", "rrdcached")
	for _, d := range []string{filepath.Dir(link), filepath.Dir(daemon)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(spooldBinary(t), link); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf("#!/bin/sh\nexec %q \"$@\" -- --admin-listen 127.0.0.1:0\n", link)
	if err := os.WriteFile(daemon, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return daemon
}

// TestRRDCachedDebianInitScript: Debian's /etc/init.d/rrdcached starts,
// reports and stops spoold as it does rrdcached. What is substituted: a
// copy of the init script reads a copy of /etc/default/rrdcached (its
// DEFAULT= line is the only line changed), whose paths are moved to a
// temporary directory and whose DAEMON is rrdcachedDaemon's. Updates
// acknowledged before the stop, still pending then (-w 300), are in the
// RRD file after it.
func TestRRDCachedDebianInitScript(t *testing.T) {
	requireRRDTool(t)
	testenv.LookPath(t, "start-stop-daemon", "Debian's init script starts and stops rrdcached with it")
	dir := t.TempDir()
	defaults, vals := debianDefaults(t, dir, rrdcachedDaemon(t, dir))
	b, err := os.ReadFile("/etc/init.d/rrdcached")
	if err != nil {
		t.Fatal(err)
	}
	const line = "DEFAULT=/etc/default/rrdcached\n"
	if bytes.Count(b, []byte(line)) != 1 {
		t.Fatalf("/etc/init.d/rrdcached has no single %q line", line)
	}
	initScript := filepath.Join(dir, "init-rrdcached")
	if err := os.WriteFile(initScript, bytes.Replace(b, []byte(line), []byte("DEFAULT="+defaults+"\n"), 1), 0o755); err != nil {
		t.Fatal(err)
	}
	pidFile, sock, base := vals["PIDFILE"], vals["SOCKFILE"], vals["BASE_PATH"]
	if err := os.MkdirAll(filepath.Dir(pidFile), 0o755); err != nil {
		t.Fatal(err)
	}
	killPidFile(t, pidFile)
	initd := func(action string) (string, error) {
		return runBounded(t, "/bin/sh", []string{initScript, action}, []string{"SYSTEMCTL_SKIP_REDIRECT=1"})
	}

	if out, err := initd("start"); err != nil {
		t.Fatalf("init script start: %v\n%s", err, out)
	}
	pid := pidFromFile(t, pidFile)
	out, err := initd("status")
	if err != nil || !strings.Contains(out, fmt.Sprintf("running as %d", pid)) {
		t.Fatalf("init script status: %v, want running as %d\n%s", err, pid, out)
	}
	file := filepath.Join(base, "d.rrd")
	now := time.Now().Unix() / 10 * 10
	rrdtoolOut(t, "create", file, "--daemon", "unix:"+sock, "-s", "10", "-b", strconv.FormatInt(now-100, 10), "DS:a:GAUGE:20:U:U", "RRA:LAST:0.5:1:100")
	var updates []string
	for i := int64(1); i <= 5; i++ {
		updates = append(updates, fmt.Sprintf("%d:%d", now-100+10*i, i))
	}
	rrdtoolOut(t, append([]string{"update", file, "--daemon", "unix:" + sock}, updates...)...)
	if last, _ := testenv.RRDLastUpdate(t, file); last != now-100 {
		t.Fatalf("the file's last update is %d before the stop, want %d: the updates were not pending", last, now-100)
	}

	stopped := time.Now()
	if out, err := initd("stop"); err != nil || !strings.Contains(out, "has been stopped") {
		t.Fatalf("init script stop: %v\n%s", err, out)
	}
	// The script's start-stop-daemon --retry 5 sends SIGKILL after 5 s:
	// what spoold had not written by then would be missing below.
	t.Logf("the init script's stop took %s", time.Since(stopped).Round(time.Millisecond))
	if _, _, alive := procStat(pid); alive {
		t.Fatalf("pid %d runs after the init script's stop", pid)
	}
	rows := lastRows(t, file, now-100, now-50)
	for i := int64(1); i <= 5; i++ {
		if v, ok := rows[now-100+10*i]; !ok || v != float64(i) {
			t.Errorf("after the stop, the file has %v at %d, want %d (rows %v)", v, now-100+10*i, i, rows)
		}
	}
	if out, err := initd("status"); err == nil || !strings.Contains(out, "not running") {
		t.Errorf("init script status after the stop: %v, want not running\n%s", err, out)
	}
}

// unitExecStart is the command systemd runs for the unit file's
// ExecStart: continuation lines joined, $$ made $.
func unitExecStart(t *testing.T, unit string) (name string, args []string) {
	t.Helper()
	b, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ExecStart=(\S+) (\S+) '([^']*)'$`).FindStringSubmatch(strings.ReplaceAll(string(b), "\\\n", " "))
	if m == nil {
		t.Fatalf("%s: no ExecStart=SHELL -c '...'", unit)
	}
	return m[1], []string{m[2], strings.ReplaceAll(m[3], "$$", "$")}
}

// TestRRDCachedUnit: the shipped spoold-rrdcached.service, with the
// environment its EnvironmentFile= gives from Debian's
// /etc/default/rrdcached as it is (paths moved to a temporary directory),
// runs spoold on the file's socket, tells systemd READY=1 on the notify
// socket once the socket serves (Type=notify), writes through it, and ends
// on SIGTERM. systemd itself is not run: its ExecStart is, as systemd
// would run it, with the binary's path replaced by this test binary's and
// the admin server on a free port.
func TestRRDCachedUnit(t *testing.T) {
	requireRRDTool(t)
	dir := t.TempDir()
	_, vals := debianDefaults(t, dir, "/usr/bin/rrdcached")
	name, args := unitExecStart(t, "../../docs/spoold-rrdcached.service")
	if !strings.Contains(args[1], "exec /usr/local/bin/spoold rrdcached -g ") {
		t.Fatalf("ExecStart %q does not exec spoold rrdcached -g", args[1])
	}
	args[1] = strings.Replace(args[1], "/usr/local/bin/spoold", spooldBinary(t), 1) + " -- --admin-listen 127.0.0.1:0"
	for _, d := range []string{vals["BASE_PATH"], filepath.Dir(vals["PIDFILE"])} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	notify := filepath.Join(dir, "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: notify, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), childEnv+"=1", "NOTIFY_SOCKET="+notify)
	for k, v := range vals {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	conn.SetReadDeadline(time.Now().Add(startBound))
	buf := make([]byte, 4096)
	for {
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("no READY=1 on the notify socket: %v\n%s", err, stderr.String())
		}
		if strings.Contains(string(buf[:n]), "READY=1") {
			break
		}
	}
	if got := pidFromFile(t, vals["PIDFILE"]); got != cmd.Process.Pid {
		t.Errorf("pid file holds %d, want the unit's main process %d (the shell exec'd spoold)", got, cmd.Process.Pid)
	}
	checkUpdateFetch(t, "unix:"+vals["SOCKFILE"], vals["BASE_PATH"])
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, stderr.String())
	}
}

// TestLineLevel: a detached daemon's log line goes to syslog at the
// priority of its slog level, text or JSON.
func TestLineLevel(t *testing.T) {
	for line, want := range map[string]string{
		`time=2026-01-01T00:00:00Z level=ERROR msg="start spoold" err="level=INFO"`: "ERROR",
		`time=2026-01-01T00:00:00Z level=WARN msg=x`:                                "WARN",
		`{"time":"2026-01-01T00:00:00Z","level":"DEBUG","msg":"x"}`:                 "DEBUG",
		`{"time":"2026-01-01T00:00:00Z","level":"INFO","msg":"level=ERROR"}`:        "INFO",
		`spoold: unexpected argument "x"`:                                           "",
	} {
		if got := lineLevel(line); got != want {
			t.Errorf("lineLevel(%q) = %q, want %q", line, got, want)
		}
	}
}

// TestSyslogLines: each line a detached daemon logs is one syslog message
// of facility daemon at the priority of its level, tagged with its name.
func TestSyslogLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	w, err := syslog.Dial("unixgram", path, syslog.LOG_DAEMON|syslog.LOG_INFO, "rrdcached")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for line, pri := range map[string]int{
		"time=t level=ERROR msg=\"start spoold\" component=daemon\n": 3*8 + 3,
		"time=t level=WARN msg=x\n":                                  3*8 + 4,
		"time=t level=INFO msg=x\n":                                  3*8 + 6,
		"{\"time\":\"t\",\"level\":\"DEBUG\",\"msg\":\"x\"}\n":       3*8 + 7,
	} {
		if _, err := (syslogLines{w}).Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, 4096)
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got := string(buf[:n])
		want := fmt.Sprintf("<%d>", pri)
		if !strings.HasPrefix(got, want) || !strings.Contains(got, fmt.Sprintf(" rrdcached[%d]: ", os.Getpid())) || !strings.HasSuffix(got, strings.TrimSuffix(line, "\n")+"\n") {
			t.Errorf("line %q sent as %q, want priority %s, tag rrdcached[pid] and the line", line, got, want)
		}
	}
}
