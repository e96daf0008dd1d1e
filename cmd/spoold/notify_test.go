package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoold/spoold/spool"
	"golang.org/x/sys/unix"
)

// notifyMsg is one datagram spoold sent to $NOTIFY_SOCKET, with what was
// true the moment it arrived.
type notifyMsg struct {
	state      string
	adminErr   error // GET /status at once
	spoolFlock error // flock of the spool's lock file at once
}

// listenNotify listens on an abstract unixgram socket (the '@' form
// systemd may pass) and returns its $NOTIFY_SOCKET name and the messages.
// For READY=1 it probes, before reading on, whether the admin address
// answers and the spool is locked.
func listenNotify(t *testing.T, admin, spoolDir string) (string, <-chan notifyMsg) {
	t.Helper()
	name := fmt.Sprintf("@spoold-test-notify-%d-%d", os.Getpid(), time.Now().UnixNano())
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	msgs := make(chan notifyMsg, 1000)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				close(msgs)
				return
			}
			m := notifyMsg{state: string(buf[:n])}
			if m.state == "READY=1" {
				m.adminErr, m.spoolFlock = probeAdmin(admin), probeSpoolLock(spoolDir)
			}
			msgs <- m
		}
	}()
	return name, msgs
}

func probeAdmin(addr string) error {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + addr + "/status")
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /status: %s", resp.Status)
	}
	return nil
}

// probeSpoolLock tries the spool's lock as another spoold would: nil
// means it was free.
func probeSpoolLock(dir string) error {
	f, err := os.Open(filepath.Join(dir, spool.LockFile))
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return err
	}
	return unix.Flock(int(f.Fd()), unix.LOCK_UN)
}

// freeAddr returns a 127.0.0.1 address nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func nextNotify(t *testing.T, msgs <-chan notifyMsg, p *daemonProc, want string) notifyMsg {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-msgs:
			if !ok {
				t.Fatalf("notify socket closed before %s", want)
			}
			if m.state == want {
				return m
			}
			if m.state != "WATCHDOG=1" {
				t.Fatalf("spoold sent %q, want %s (or WATCHDOG=1)\n%s", m.state, want, p.stderr)
			}
		case <-timeout:
			t.Fatalf("no %s from spoold within 30s\n%s", want, p.stderr)
		}
	}
}

// TestSystemdNotifyReadyWatchdogStopping runs spoold as systemd would with
// Type=notify and WatchdogSec: READY=1 arrives once the admin address
// answers and the spool is locked, WATCHDOG=1 follows every half of
// WATCHDOG_USEC while the loops run, and STOPPING=1 follows SIGTERM before
// spoold exits 0.
func TestSystemdNotifyReadyWatchdogStopping(t *testing.T) {
	f := startFleet(t, 2)
	dir := t.TempDir()
	admin := freeAddr(t)
	name, msgs := listenNotify(t, admin, filepath.Join(dir, "spool"))
	t.Setenv("NOTIFY_SOCKET", name)
	t.Setenv("WATCHDOG_USEC", "400000") // 0.4 s: a ping every 0.2 s
	args := daemonArgs(dir, f, "--write-delay", "1h")
	for i, a := range args {
		if a == "--admin-listen" {
			args[i+1] = admin
		}
	}
	p := startDaemon(t, args...)

	ready := nextNotify(t, msgs, p, "READY=1")
	if ready.adminErr != nil {
		t.Fatalf("READY=1 arrived before the admin address answered: %v", ready.adminErr)
	}
	if !errors.Is(ready.spoolFlock, unix.EWOULDBLOCK) {
		t.Fatalf("READY=1 arrived while the spool lock was not held (flock: %v)", ready.spoolFlock)
	}
	start := time.Now()
	for range 3 {
		nextNotify(t, msgs, p, "WATCHDOG=1")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("3 watchdog pings took %s, want one every 0.2 s", took)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	nextNotify(t, msgs, p, "STOPPING=1")
	select {
	case err := <-p.exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, p.stderr)
		}
	case <-time.After(time.Minute):
		t.Fatalf("spoold did not exit after STOPPING=1\n%s", p.stderr)
	}
	select {
	case m := <-msgs:
		t.Fatalf("after STOPPING=1 spoold sent %q", m.state)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestLivenessNamesTheStalledLoop: the watchdog pings only while the
// writer loop woke within writerStall, the poller ended a cycle within two
// intervals and pollerSlack, and no loop goroutine has returned.
func TestLivenessNamesTheStalledLoop(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	open := make(chan struct{})
	returned := make(chan struct{})
	close(returned)
	tests := []struct {
		name           string
		writer, poller time.Duration // ago
		loader         <-chan struct{}
		want           string // in the error; "" = alive
	}{
		{"all fresh", time.Second, time.Second, open, ""},
		{"poller between cycles", time.Second, 2*5*time.Minute + pollerSlack - time.Second, open, ""},
		{"writer stalled", writerStall + time.Second, time.Second, open, "writer loop has not woken"},
		{"poller stalled", time.Second, 2*5*time.Minute + pollerSlack + time.Second, open, "poller has not ended a cycle"},
		{"loader returned", time.Second, time.Second, returned, "loader loop has returned"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := liveness{pollInterval: 5 * time.Minute, loops: map[string]<-chan struct{}{"writer": open, "poller": open, "loader": tt.loader}}
			l.writer.Store(now.Add(-tt.writer).UnixNano())
			l.poller.Store(now.Add(-tt.poller).UnixNano())
			err := l.check(now)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("check: %v, want alive", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("check: %v, want an error with %q", err, tt.want)
			}
		})
	}
}
