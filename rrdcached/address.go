package rrdcached

import (
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
	host, port := hp, DefaultPort
	if h, p, err := net.SplitHostPort(hp); err == nil {
		host, port = h, p
	} else if strings.HasPrefix(hp, "[") && strings.HasSuffix(hp, "]") {
		host = hp[1 : len(hp)-1]
	} else if strings.Contains(hp, ":") && !strings.Contains(hp, "]") && strings.Count(hp, ":") > 1 {
		return Address{}, fmt.Errorf("parse rrdcached address %q: an IPv6 address needs brackets ([::1]:42217)", s)
	} else if strings.Contains(hp, ":") {
		return Address{}, fmt.Errorf("parse rrdcached address %q: %w", s, err)
	}
	if host == "" {
		return Address{}, fmt.Errorf("parse rrdcached address %q: no host (want unix:PATH or tcp:HOST:PORT)", s)
	}
	if port == "" {
		return Address{}, fmt.Errorf("parse rrdcached address %q: empty port", s)
	}
	return Address{"tcp", net.JoinHostPort(host, port)}, nil
}
