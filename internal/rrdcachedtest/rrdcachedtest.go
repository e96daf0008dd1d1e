// Package rrdcachedtest starts Debian's rrdcached for tests: a real peer of
// spoold's rrdcached client and of its forwarding. Under SPOOLD_TEST_STRICT=1
// a missing rrdcached fails the test (testenv). It starts no goroutines
// besides one per process that waits for its exit.
package rrdcachedtest

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testenv"
)

// Server is an rrdcached process: a unix socket, a base directory its
// clients' relative file names resolve in (-b with -B), a journal (-j).
type Server struct {
	tb      testing.TB
	Sock    string // the socket path
	Dir     string // the base directory of RRD files
	Journal string
	// Args are extra arguments (-w, -z, ...) of every start.
	Args []string
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd exited
	out  bytes.Buffer
}

// Start starts rrdcached in the foreground with a socket and directories
// under a new temp directory, waits until it accepts connections, and stops
// it when the test ends. -R lets CREATE make subdirectories.
func Start(tb testing.TB, args ...string) *Server {
	tb.Helper()
	return StartDir(tb, "", args...)
}

// StartDir is Start with the RRD files in base (a new directory when
// empty).
func StartDir(tb testing.TB, base string, args ...string) *Server {
	tb.Helper()
	bin := testenv.LookPath(tb, "rrdcached", "the rrdcached client and forwarding are tested against Debian's rrdcached")
	dir, err := os.MkdirTemp("", "rrdcached") // short: a socket path has at most 107 bytes
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	s := &Server{tb: tb, Sock: filepath.Join(dir, "sock"), Dir: base, Journal: filepath.Join(dir, "journal"), Args: args}
	mk := []string{s.Journal}
	if base == "" {
		s.Dir = filepath.Join(dir, "rrd")
		mk = append(mk, s.Dir)
	}
	for _, d := range mk {
		if err := os.Mkdir(d, 0o750); err != nil {
			tb.Fatal(err)
		}
	}
	s.start(bin)
	tb.Cleanup(func() { s.Kill() })
	return s
}

// Address is the socket as an rrdcached address ("unix:PATH").
func (s *Server) Address() string { return "unix:" + s.Sock }

func (s *Server) start(bin string) {
	s.tb.Helper()
	args := append([]string{"-g", "-l", "unix:" + s.Sock, "-b", s.Dir, "-B", "-R", "-F", "-j", s.Journal}, s.Args...)
	s.out.Reset()
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.out
	if err := s.cmd.Start(); err != nil {
		s.tb.Fatalf("start rrdcached: %v", err)
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { cmd.Wait(); close(done) }(s.cmd, s.done)
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("unix", s.Sock)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-s.done:
			s.cmd = nil
			s.tb.Fatalf("rrdcached exited at start; its output:\n%s", s.out.String())
		default:
		}
		if time.Now().After(deadline) {
			s.Kill()
			s.tb.Fatalf("rrdcached does not accept connections on %s: %v; its output:\n%s", s.Sock, err, s.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Kill sends SIGKILL and waits for the process (a no-op when stopped).
func (s *Server) Kill() { s.signal(syscall.SIGKILL); os.Remove(s.Sock) }

// Stop sends SIGTERM (rrdcached -F flushes everything) and waits.
func (s *Server) Stop() { s.signal(syscall.SIGTERM) }

func (s *Server) signal(sig syscall.Signal) {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(sig)
	<-s.done
	s.cmd = nil
}

// Restart starts the process again on the same socket, directory and
// journal (after Kill or Stop).
func (s *Server) Restart() {
	s.tb.Helper()
	s.Kill()
	s.start(testenv.LookPath(s.tb, "rrdcached", "restart rrdcached"))
}
