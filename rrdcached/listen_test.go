package rrdcached_test

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/rrdcached"
)

func TestParseSpec(t *testing.T) {
	for spec, want := range map[string]string{
		"unix:/run/spoold.sock":  "unix /run/spoold.sock",
		"unix:/run//x/../s.sock": "unix /run/s.sock",
		"tcp:127.0.0.1:42217":    "tcp 127.0.0.1:42217",
		"tcp:[::1]:1":            "tcp [::1]:1",
		"tcp:localhost":          "tcp localhost:42217",
		"tcp:[::1]":              "tcp [::1]:42217",
		"tcp:::1":                "tcp [::1]:42217",
	} {
		n, a, err := rrdcached.ParseSpec(spec)
		if got := n + " " + a; err != nil || got != want {
			t.Errorf("ParseSpec(%q) = %q, %v; want %q", spec, got, err, want)
		}
	}
	for _, bad := range []string{"", "unix:", "unix:rel.sock", "tcp:", "tcp:1.2.3.4:x", "tcp:1.2.3.4:70000", "udp:1.2.3.4:1", "/run/x.sock"} {
		if _, _, err := rrdcached.ParseSpec(bad); err == nil || !strings.Contains(err.Error(), strconv.Quote(bad)) {
			t.Errorf("ParseSpec(%q): %v, want an error naming it", bad, err)
		}
	}
}

// TestUnixSocket: mode and group are the socket's from the first moment,
// a stale socket is replaced, a file that is not a socket and a socket a
// server answers on are left alone, and Close removes the socket.
func TestUnixSocket(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "s.sock")
	gid := os.Getgid()
	s := startServer(t, func(o *rrdcached.Options) {
		o.Listeners = []rrdcached.ListenerOptions{{Spec: "unix:" + sock, Mode: 0o660, Group: strconv.Itoa(gid)}}
	})
	var st unix.Stat_t
	if err := unix.Lstat(sock, &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode&0o7777 != 0o660 || st.Mode&unix.S_IFMT != unix.S_IFSOCK || int(st.Gid) != gid {
		t.Errorf("socket mode %o gid %d, want a socket of mode 660, gid %d", st.Mode, st.Gid, gid)
	}
	if got := s.dial(t, 0).do("PING"); got.Message != "PONG" {
		t.Fatalf("PING: %q", got)
	}

	// A live server's socket is not taken over.
	opts := rrdcached.DefaultOptions()
	opts.Dir = s.dir
	opts.Listeners = []rrdcached.ListenerOptions{{Spec: "unix:" + sock}}
	if s2, err := rrdcached.New(opts, newMemBackend(s.dir), nil, nil); err == nil {
		s2.Close()
		t.Fatalf("a second server took over a live socket")
	} else if !strings.Contains(err.Error(), "a server answers on it") {
		t.Errorf("second server: %v", err)
	}
	if got := s.dial(t, 0).do("PING"); got.Message != "PONG" {
		t.Errorf("the first server after the second tried: %q", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket file after Close: %v", err)
	}

	// A stale socket (a crashed server's) is replaced.
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	s3, err := rrdcached.New(opts, newMemBackend(s.dir), nil, nil)
	if err != nil {
		t.Fatalf("over a stale socket: %v", err)
	}
	if c, err := net.Dial("unix", sock); err != nil {
		t.Errorf("dial the new socket: %v", err)
	} else {
		c.Close()
	}
	s3.Close()

	// Anything else at the path stays as it is.
	if err := os.WriteFile(sock, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s4, err := rrdcached.New(opts, newMemBackend(s.dir), nil, nil); err == nil {
		s4.Close()
		t.Fatalf("a server replaced a regular file")
	} else if !strings.Contains(err.Error(), "not a socket") || !strings.Contains(err.Error(), sock) {
		t.Errorf("over a regular file: %v", err)
	}
	if b, _ := os.ReadFile(sock); string(b) != "keep me" {
		t.Errorf("the regular file became %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left in the socket's directory: %v", ents)
	}
}

func TestOptionsValidate(t *testing.T) {
	for name, edit := range map[string]func(*rrdcached.Options){
		"no dir":        func(o *rrdcached.Options) { o.Dir = "" },
		"max line":      func(o *rrdcached.Options) { o.MaxLine = 1 },
		"max batch":     func(o *rrdcached.Options) { o.MaxBatch = 0 },
		"max conns":     func(o *rrdcached.Options) { o.MaxConns = 0 },
		"idle":          func(o *rrdcached.Options) { o.IdleTimeout = 0 },
		"write":         func(o *rrdcached.Options) { o.WriteTimeout = -1 },
		"listener spec": func(o *rrdcached.Options) { o.Listeners = []rrdcached.ListenerOptions{{Spec: "tcp"}} },
		"listener conns": func(o *rrdcached.Options) {
			o.Listeners = []rrdcached.ListenerOptions{{Spec: "tcp:127.0.0.1:0", MaxConns: -1}}
		},
		"log interval": func(o *rrdcached.Options) { o.LogInterval = -1 },
	} {
		o := rrdcached.DefaultOptions()
		o.Dir = t.TempDir()
		if err := o.Validate(); err != nil {
			t.Fatalf("defaults: %v", err)
		}
		edit(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
