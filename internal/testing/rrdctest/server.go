package rrdctest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// Server is a Debian rrdcached process of a test, in the foreground (-g),
// with a journal (-j) and a pid file of its own; the test may kill, stop
// and restart it. It is killed when the test ends.
type Server struct {
	tb testing.TB
	// Sock is the unix socket StartServer listens on; Dir the base
	// directory of RRD files (-b, with -B); Journal holds the journal.
	Sock, Dir, Journal string
	args               []string // after -g
	socks              []string // unix sockets that must answer after a start
	log                string   // the process's output
	cmd                *exec.Cmd
	done               chan struct{} // closed when cmd exited
}

// Start runs Debian's rrdcached as the conformance tests need it:
// `rrdcached -g -B -b DIR -F -j JDIR` with the listener arguments given
// (e.g. "-l", "unix:/path", "-P", "PING", "-l", "unix:/other"), until the
// test ends. It returns the server when every unix socket named answers.
// A missing rrdcached ends the test as testenv.Missing does.
func Start(t testing.TB, dir string, listen ...string) *Server {
	t.Helper()
	jdir := t.TempDir()
	s := &Server{tb: t, Dir: dir, Journal: jdir, log: filepath.Join(jdir, "log"),
		args: append([]string{"-B", "-b", dir, "-F", "-j", jdir, "-p", filepath.Join(jdir, "pid")}, listen...)}
	for i := 0; i+1 < len(listen); i++ {
		if listen[i] == "-l" && strings.HasPrefix(listen[i+1], "unix:") {
			s.socks = append(s.socks, strings.TrimPrefix(listen[i+1], "unix:"))
		}
	}
	s.start()
	t.Cleanup(s.Kill)
	return s
}

// StartServer starts rrdcached on a unix socket of its own, with its RRD
// files in base (a new directory when empty) and -R (CREATE makes
// subdirectories), plus args (-w, -z, ...) at every start; it returns when
// the socket answers.
func StartServer(tb testing.TB, base string, args ...string) *Server {
	tb.Helper()
	dir, err := os.MkdirTemp("", "rrdcached") // short: a socket path has at most 107 bytes
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	if base == "" {
		base = filepath.Join(dir, "rrd")
		if err := os.Mkdir(base, 0o750); err != nil {
			tb.Fatal(err)
		}
	}
	s := &Server{tb: tb, Sock: filepath.Join(dir, "sock"), Dir: base, Journal: filepath.Join(dir, "journal"), log: filepath.Join(dir, "log")}
	if err := os.Mkdir(s.Journal, 0o750); err != nil {
		tb.Fatal(err)
	}
	s.args = append([]string{"-l", "unix:" + s.Sock, "-b", base, "-B", "-R", "-F", "-j", s.Journal, "-p", filepath.Join(dir, "pid")}, args...)
	s.socks = []string{s.Sock}
	s.start()
	tb.Cleanup(s.Kill)
	return s
}

// Process is the running rrdcached process (nil once stopped).
func (s *Server) Process() *os.Process {
	if s.cmd == nil {
		return nil
	}
	return s.cmd.Process
}

// Address is the socket as an rrdcached address ("unix:PATH").
func (s *Server) Address() string { return "unix:" + s.Sock }

func (s *Server) start() {
	s.tb.Helper()
	bin := testenv.LookPath(s.tb, "rrdcached", "spoold's rrdcached server, client and forwarding are checked against Debian's rrdcached")
	logf, err := os.Create(s.log)
	if err != nil {
		s.tb.Fatal(err)
	}
	defer logf.Close()
	args := append([]string{"-g"}, s.args...)
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		s.tb.Fatalf("start rrdcached %v: %v", args, err)
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { cmd.Wait(); close(done) }(s.cmd, s.done)
	for _, sock := range s.socks {
		s.waitFor(args, sock)
	}
}

// waitFor returns when sock accepts a connection; it fails the test when
// the process exits first or 20 s pass.
func (s *Server) waitFor(args []string, sock string) {
	s.tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-s.done:
			s.cmd = nil
			s.tb.Fatalf("rrdcached %v exited before listening: %s", args, s.output())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Kill()
			s.tb.Fatalf("rrdcached %v does not answer on %s within 20 s: %v\n%s", args, sock, err, s.output())
		}
	}
}

func (s *Server) output() string { b, _ := os.ReadFile(s.log); return string(b) }

// Kill sends SIGKILL and waits for the process (a no-op when stopped).
func (s *Server) Kill() { s.signal(syscall.SIGKILL) }

// Stop sends SIGTERM (rrdcached -F writes everything it queues) and waits.
func (s *Server) Stop() { s.signal(syscall.SIGTERM) }

func (s *Server) signal(sig syscall.Signal) {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(sig)
	<-s.done
	s.cmd = nil
	for _, sock := range s.socks {
		os.Remove(sock) // a killed rrdcached leaves its socket
	}
}

// Restart starts the process again with the same sockets, directory and
// journal (after Kill or Stop; a running one is killed first).
func (s *Server) Restart() {
	s.tb.Helper()
	s.Kill()
	s.start()
}
