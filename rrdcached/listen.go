package rrdcached

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// DefaultPort is rrdcached's TCP port, used when a tcp: spec names none.
const DefaultPort = "42217"

// ListenerOptions configure one listening socket.
type ListenerOptions struct {
	// Spec is "unix:PATH" or "tcp:ADDR:PORT" ("tcp:127.0.0.1:42217",
	// "tcp:[::1]:42217"; without a port, rrdcached's 42217).
	Spec string
	// Mode is a unix socket file's mode (rrdcached -m); 0 leaves what the
	// umask gives.
	Mode os.FileMode
	// Group is a unix socket file's group, a name or a number (rrdcached
	// -s); "" leaves the process's.
	Group string
	// Permissions are the commands accepted (rrdcached -P). nil: every
	// command on a unix socket, ReadCommands on TCP (rrdcached allows
	// everything everywhere; TCP has no authentication at all).
	Permissions Permissions
	// MaxConns bounds this listener's open connections; 0 gives it an
	// equal share of the server's MaxConns (see Options.MaxConns).
	MaxConns int
}

// ParseSpec splits a listener spec into its network ("unix" or "tcp")
// and address.
func ParseSpec(spec string) (network, addr string, err error) {
	network, addr, ok := strings.Cut(spec, ":")
	switch {
	case !ok || addr == "":
		return "", "", fmt.Errorf("parse listener %q: want unix:PATH or tcp:ADDR:PORT", spec)
	case network == "unix":
		if !filepath.IsAbs(addr) {
			return "", "", fmt.Errorf("parse listener %q: the socket path must be absolute", spec)
		}
		return network, filepath.Clean(addr), nil
	case network == "tcp":
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			if strings.Contains(addr, "]:") || strings.Count(addr, ":") == 1 {
				return "", "", fmt.Errorf("parse listener %q: %w", spec, err)
			}
			host, port = strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"), DefaultPort
		}
		if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
			return "", "", fmt.Errorf("parse listener %q: bad port %q", spec, port)
		}
		return network, net.JoinHostPort(host, port), nil
	}
	return "", "", fmt.Errorf("parse listener %q: unknown network %q (want unix or tcp)", spec, network)
}

// permissions returns the commands the listener accepts.
func (o ListenerOptions) permissions(network string) Permissions {
	switch {
	case o.Permissions != nil:
		return o.Permissions
	case network == "tcp":
		p, _ := ParsePermissions(strings.Join(ReadCommands, ","))
		return p
	}
	return AllPermissions()
}

// listen opens a listener as o says.
func listen(o ListenerOptions) (net.Listener, error) {
	network, addr, err := ParseSpec(o.Spec)
	if err != nil {
		return nil, err
	}
	if network == "tcp" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("listen on %s: %w", o.Spec, err)
		}
		return l, nil
	}
	return listenUnix(o, addr)
}

// tmpSeq numbers the temporary socket names of one process.
var tmpSeq atomic.Uint64

// listenUnix binds a socket under a temporary name beside path, gives it
// its mode and group, and links it to path: link(2) never replaces a file,
// so the socket is never reachable with the wrong permissions and nothing
// at path is ever overwritten. A socket file at path that nobody answers
// on (a crashed server's) is removed first; anything else is left alone
// and is an error.
func listenUnix(o ListenerOptions, path string) (net.Listener, error) {
	// Short, so that a socket path rrdcached could bind (at most 107
	// bytes) fits here too.
	tmp := filepath.Join(filepath.Dir(path), fmt.Sprintf(".%x.%x.tmp", os.Getpid(), tmpSeq.Add(1)))
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: tmp, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", o.Spec, err)
	}
	l.SetUnlinkOnClose(false)
	fail := func(err error) (net.Listener, error) {
		l.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("listen on %s: %w", o.Spec, err)
	}
	if o.Mode != 0 {
		if err := os.Chmod(tmp, o.Mode); err != nil {
			return fail(err)
		}
	}
	if o.Group != "" {
		gid, err := lookupGroup(o.Group)
		if err != nil {
			return fail(err)
		}
		if err := os.Lchown(tmp, -1, gid); err != nil {
			return fail(err)
		}
	}
	err = os.Link(tmp, path)
	if errors.Is(err, os.ErrExist) {
		if err = removeStaleSocket(path); err == nil {
			err = os.Link(tmp, path)
		}
	}
	if err != nil {
		return fail(err)
	}
	if err := os.Remove(tmp); err != nil {
		return fail(err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return fail(err)
	}
	return &unixListener{UnixListener: l, path: path, dev: st.Dev, ino: st.Ino}, nil
}

// removeStaleSocket removes the socket file at path if no server answers
// on it. It refuses anything that is not a socket, and removes only the
// very file it probed.
func removeStaleSocket(path string) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return fmt.Errorf("check existing %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return fmt.Errorf("refuse to replace %s: it exists and is not a socket", path)
	}
	c, err := net.Dial("unix", path)
	if err == nil {
		c.Close()
		return fmt.Errorf("refuse to replace %s: a server answers on it", path)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("probe existing socket %s: %w", path, err)
	}
	var again unix.Stat_t
	if err := unix.Lstat(path, &again); err != nil || again.Dev != st.Dev || again.Ino != st.Ino {
		return fmt.Errorf("refuse to replace %s: it changed while probed", path)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	return nil
}

func lookupGroup(name string) (int, error) {
	g, err := user.LookupGroup(name)
	if err != nil {
		if _, nerr := strconv.Atoi(name); nerr != nil {
			return 0, fmt.Errorf("look up socket group %q: %w", name, err)
		}
		if g, err = user.LookupGroupId(name); err != nil {
			return 0, fmt.Errorf("look up socket group %q: %w", name, err)
		}
	}
	gid, err := strconv.Atoi(g.Gid)
	if err != nil {
		return 0, fmt.Errorf("look up socket group %q: gid %q: %w", name, g.Gid, err)
	}
	return gid, nil
}

// unixListener removes its socket file on Close, if it is still the one
// it created.
type unixListener struct {
	*net.UnixListener
	path     string
	dev, ino uint64
}

func (l *unixListener) Close() error {
	err := l.UnixListener.Close()
	var st unix.Stat_t
	if unix.Lstat(l.path, &st) == nil && st.Dev == l.dev && st.Ino == l.ino {
		if rerr := os.Remove(l.path); rerr != nil && err == nil {
			err = fmt.Errorf("remove socket %s: %w", l.path, rerr)
		}
	}
	return err
}

// Addr is the socket's path, not the temporary name it was bound to.
func (l *unixListener) Addr() net.Addr { return &net.UnixAddr{Name: l.path, Net: "unix"} }
