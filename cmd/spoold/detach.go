package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/syslog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Detaching, as rrdcached does without -g: `spoold rrdcached` starts the
// daemon as a new process in a session of its own and exits 0 once that
// daemon serves its sockets, so that an init script (start-stop-daemon),
// a Type=forking unit or a shell script that starts rrdcached and goes on
// works unchanged. rrdcached's parent exits as soon as it has forked; this
// one waits for the daemon's readiness (the point where READY=1 goes to
// systemd), so that an exit 0 means the sockets answer and the pid file
// (-p) holds the daemon's pid, and a daemon that fails to start makes the
// start fail with its error.
//
// The daemon is this program re-executed (/proc/self/exe, argv[0] kept)
// with detachEnv set to the starting process's name. Its stdin and stdout
// are /dev/null; its stderr is a pipe to the starting process until it is
// ready, then /dev/null. Its log goes to -o's file, else to syslog under
// that name (as rrdcached's), else nowhere. The starting process keeps what
// the daemon writes to the pipe, prints it only when the daemon exits
// before it is ready, and exits with the daemon's status then (1 when it
// was killed or exited 0).

// detachEnv marks the daemon a starting process re-executed; its value is
// the starting process's name (/proc/self/comm), which the daemon takes
// (an exec of /proc/self/exe would be named "exe"), so that
// start-stop-daemon --name and pidof find it by the name it was started by.
const detachEnv = "SPOOLD_DETACHED_AS"

// readyMark is what the daemon writes on its stderr pipe once it serves:
// a NUL cannot be in a log line (slog escapes it) nor in an argument.
const readyMark = "\x00spoold: serving\n"

// maxStartOutput bounds what the starting process keeps of the daemon's
// output before it is ready: the last half of it is kept beyond that.
const maxStartOutput = 1 << 20

// detachedDaemon reports whether this process is a daemon a starting
// process re-executed and waits for.
func detachedDaemon() bool { return os.Getenv(detachEnv) != "" }

// detach starts the daemon of the rrdcached options args and waits until
// it serves or exits; see above. logFile is -o's file ("": syslog).
func detach(args []string, logFile string, stderr io.Writer) int {
	if logFile == "" {
		if w, err := syslog.New(syslog.LOG_DAEMON|syslog.LOG_INFO, "spoold"); err != nil {
			fmt.Fprintf(stderr, "spoold rrdcached: warning: no syslog (/dev/log) to log to: %v; the daemon's log is discarded (-o FILE keeps it, -g keeps it on stderr)\n", err)
		} else {
			w.Close()
		}
	}
	cmd, out, err := startDaemonProcess(args)
	if err != nil {
		fmt.Fprintln(stderr, "spoold rrdcached:", err)
		return exitError
	}
	text, ready := waitReady(out)
	out.Close()
	if ready {
		// The daemon carries on in its own session; its exit is
		// init's (or the subreaper's) to collect.
		cmd.Process.Release()
		return exitOK
	}
	werr := cmd.Wait()
	stderr.Write(text)
	code := cmd.ProcessState.ExitCode()
	if code <= 0 {
		code = exitError
	}
	fmt.Fprintf(stderr, "spoold rrdcached: the daemon (pid %d) ended before it served its sockets: %v\n", cmd.Process.Pid, exitReason(werr))
	return code
}

// exitReason is how the daemon's process ended, from cmd.Wait's error.
func exitReason(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// startDaemonProcess re-executes this program as the daemon of the
// rrdcached options args, in a new session, and returns it with the read
// end of its stderr pipe.
func startDaemonProcess(args []string) (*exec.Cmd, *os.File, error) {
	// Read-write: the daemon's stderr becomes a copy of its stdin once
	// it is ready (detachedReady).
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s for the daemon's stdin and stdout: %w", os.DevNull, err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("make the daemon's stderr pipe: %w", err)
	}
	defer w.Close() // the daemon's copy stays open: EOF when it exits
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = rrdcachedArgv(os.Args[0], args)
	cmd.Env = append(os.Environ(), detachEnv+"="+processName())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		return nil, nil, fmt.Errorf("start the daemon (/proc/self/exe): %w", err)
	}
	return cmd, r, nil
}

// rrdcachedArgv is the argv that runs `spoold rrdcached args` as argv0:
// the options alone when argv0 is named rrdcached (commandLine adds it).
func rrdcachedArgv(argv0 string, args []string) []string {
	argv := []string{argv0}
	if filepath.Base(argv0) != "rrdcached" {
		argv = append(argv, "rrdcached")
	}
	return append(argv, args...)
}

// processName is this process's name, as the kernel keeps it (at most 15
// bytes, the base name it was executed by).
func processName() string {
	if b, err := os.ReadFile("/proc/self/comm"); err == nil && len(bytes.TrimSpace(b)) > 0 {
		return string(bytes.TrimSpace(b))
	}
	name := filepath.Base(os.Args[0])
	return name[:min(len(name), 15)]
}

// waitReady reads the daemon's output until it says it is ready (true)
// or the pipe ends (false: it exited), and returns what it wrote before.
func waitReady(r io.Reader) ([]byte, bool) {
	var out []byte
	chunk := make([]byte, 4096)
	for {
		n, err := r.Read(chunk)
		out = append(out, chunk[:n]...)
		if i := bytes.Index(out, []byte(readyMark)); i >= 0 {
			return out[:i], true
		}
		if len(out) > maxStartOutput {
			out = append(out[:0:0], out[len(out)-maxStartOutput/2:]...)
		}
		if err != nil {
			return out, false
		}
	}
}

// becomeDetached is the daemon's first step: it takes the starting
// process's name, and ignores SIGPIPE, so that a starting process killed
// before the daemon is ready costs the daemon its start-up lines, not its
// life (Go ends a program whose write to a closed pipe on fd 2 fails).
func becomeDetached() {
	signal.Ignore(syscall.SIGPIPE)
	// Best effort: only the name start-stop-daemon --name matches depends
	// on it, and a kernel without /proc/self/comm has no such match.
	_ = os.WriteFile("/proc/self/comm", []byte(os.Getenv(detachEnv)), 0)
}

// detachedLog is where a detached daemon logs: -o's file, else syslog
// under its name, else nowhere; and, until it is ready, its stderr pipe.
func detachedLog(logFile string, stderr io.Writer) (io.Writer, func(), error) {
	var sink io.Writer = io.Discard
	closeSink := func() {}
	if logFile != "" {
		f, err := openLogFile(logFile)
		if err != nil {
			return nil, nil, err
		}
		sink, closeSink = f, func() { f.Close() }
	} else if w, err := syslog.New(syslog.LOG_DAEMON|syslog.LOG_INFO, os.Getenv(detachEnv)); err == nil {
		sink, closeSink = syslogLines{w}, func() { w.Close() }
	}
	return teeLog{sink, stderr}, closeSink, nil
}

// openLogFile opens -o's file for appending, as rrdcached does.
func openLogFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open log file %s (-o): %w", path, err)
	}
	return f, nil
}

// teeLog writes each log line to the sink, and to stderr whose failure
// (the starting process gone) does not matter.
type teeLog struct{ sink, stderr io.Writer }

func (t teeLog) Write(p []byte) (int, error) {
	t.stderr.Write(p)
	return t.sink.Write(p)
}

// syslogLines sends each slog line (text or JSON) to syslog at the
// priority of its level.
type syslogLines struct{ w *syslog.Writer }

func (s syslogLines) Write(p []byte) (int, error) {
	msg := strings.TrimRight(string(p), "\n")
	var err error
	switch lineLevel(msg) {
	case "ERROR":
		err = s.w.Err(msg)
	case "WARN":
		err = s.w.Warning(msg)
	case "DEBUG":
		err = s.w.Debug(msg)
	default:
		err = s.w.Info(msg)
	}
	return len(p), err
}

// lineLevel is the level of a slog line: the value after its first
// level= (text) or "level":" (JSON), whichever comes first (slog writes
// the level before the message and attributes).
func lineLevel(line string) string {
	at, rest := len(line), ""
	for _, key := range []string{"level=", `"level":"`} {
		if i := strings.Index(line, key); i >= 0 && i < at {
			at, rest = i, line[i+len(key):]
		}
	}
	if j := strings.IndexAny(rest, ` "`); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// detachedReady tells the starting process that the daemon serves, once,
// and points the daemon's stderr at /dev/null: the starting process exits
// and nobody reads the pipe any more. Without a starting process waiting
// it does nothing. The mark is written whatever else fails: a starting
// process without it would wait for ever.
func detachedReady() error {
	if !detachedDaemon() {
		return nil
	}
	os.Unsetenv(detachEnv)
	pipe, err := unix.Dup(2)
	if err != nil {
		os.Stderr.WriteString(readyMark)
		return fmt.Errorf("keep the stderr pipe (stderr stays on it): %w", err)
	}
	p := os.NewFile(uintptr(pipe), "stderr pipe")
	defer p.Close()
	// stdin is /dev/null (startDaemonProcess): stderr becomes a copy of
	// it, with no open that a start-time restriction of the daemon's file
	// access could refuse, and before the mark, so that a line logged
	// meanwhile never reaches a pipe whose reader has gone.
	if err = unix.Dup3(0, 2, 0); err != nil {
		err = fmt.Errorf("point stderr at stdin's /dev/null: %w", err)
	}
	if _, werr := p.WriteString(readyMark); werr != nil && !errors.Is(werr, syscall.EPIPE) {
		err = errors.Join(err, fmt.Errorf("write the ready mark to the starting process: %w", werr))
	}
	return err
}
