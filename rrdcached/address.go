package rrdcached

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// DefaultPort is rrdcached's TCP port (RRDCACHED_DEFAULT_PORT).
const DefaultPort = "42217"

// Address is a socket of an rrdcached server: Network "unix" with a path,
// or "tcp" with host:port.
type Address struct {
	Network string
	Addr    string
}

// String renders the address as ParseAddress takes it back: "unix:PATH" or
// "tcp:HOST:PORT".
func (a Address) String() string { return a.Network + ":" + a.Addr }

// ParseAddress parses an address as rrdtool's RRDCACHED_ADDRESS and
// rrdcached -l write them, and as spoold's flags do: "unix:PATH" or an
// absolute PATH is a unix socket; "tcp:HOST:PORT", "HOST:PORT", "HOST",
// "[V6]:PORT" and "[V6]" are TCP, on port 42217 when none is given.
func ParseAddress(s string) (Address, error) {
	switch {
	case strings.HasPrefix(s, "unix:"):
		if p := s[len("unix:"):]; p != "" {
			return Address{"unix", p}, nil
		}
		return Address{}, fmt.Errorf("parse rrdcached address %q: no socket path after unix:", s)
	case strings.HasPrefix(s, "/"):
		return Address{"unix", s}, nil
	}
	hp := strings.TrimPrefix(s, "tcp:")
	host, port, err := splitHostPort(hp)
	if err != nil {
		return Address{}, fmt.Errorf("parse rrdcached address %q: %w", s, err)
	}
	return Address{"tcp", net.JoinHostPort(host, port)}, nil
}

// splitHostPort splits "HOST", "HOST:PORT", "[V6]" or "[V6]:PORT" as
// rrdtool's client does, with DefaultPort when none is given.
func splitHostPort(hp string) (host, port string, err error) {
	port = DefaultPort
	switch {
	case strings.HasPrefix(hp, "["):
		end := strings.IndexByte(hp, ']')
		if end < 0 {
			return "", "", errors.New("no ] after [")
		}
		host, rest := hp[1:end], hp[end+1:]
		if ip := net.ParseIP(host); ip == nil || !strings.Contains(host, ":") {
			return "", "", fmt.Errorf("%q in brackets is not an IPv6 address", host)
		}
		if rest != "" {
			p, ok := strings.CutPrefix(rest, ":")
			if !ok {
				return "", "", fmt.Errorf("%q after the brackets", rest)
			}
			port = p
		}
		return host, port, checkPort(port)
	case strings.Count(hp, ":") > 1:
		return "", "", errors.New("an IPv6 address needs brackets ([::1]:42217)")
	}
	host, p, found := strings.Cut(hp, ":")
	if found {
		port = p
	}
	if host == "" {
		return "", "", errors.New("no host (want unix:PATH or tcp:HOST:PORT)")
	}
	for i := 0; i < len(host); i++ {
		if c := host[i]; !(c == '.' || c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return "", "", fmt.Errorf("host %q holds %q", host, c)
		}
	}
	return host, port, checkPort(port)
}

// checkPort accepts a port number or a service name.
func checkPort(p string) error {
	if p == "" {
		return errors.New("empty port")
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return fmt.Errorf("port %q is not a number or a service name", p)
		}
	}
	return nil
}
