package rrdcached

import (
	"fmt"
	"net"
	"strings"
)

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
// "[V6]:PORT" and "[V6]" are TCP, on DefaultPort when none is given. The
// spoold forms are the listeners' (ParseSpec).
func ParseAddress(s string) (Address, error) {
	spec := s
	switch {
	case strings.HasPrefix(s, "unix:") || strings.HasPrefix(s, "tcp:"):
	case strings.HasPrefix(s, "/"):
		spec = "unix:" + s
	default:
		spec = "tcp:" + s
	}
	if hp, ok := strings.CutPrefix(spec, "tcp:"); ok {
		switch {
		case !strings.HasPrefix(hp, "[") && strings.Count(hp, ":") > 1:
			// rrdtool would split at the last colon, ParseSpec take it
			// all as an IPv6 address: say which is meant.
			return Address{}, fmt.Errorf("parse rrdcached address %q: an IPv6 address needs brackets ([::1]:42217)", s)
		case strings.Count(hp, "[") != strings.Count(hp, "]") || strings.Count(hp, "[") > 1 || strings.Contains(hp, "]") && !strings.HasPrefix(hp, "["):
			return Address{}, fmt.Errorf("parse rrdcached address %q: brackets go around an IPv6 address only ([::1]:42217)", s)
		}
	}
	network, addr, err := ParseSpec(spec)
	if err != nil {
		return Address{}, fmt.Errorf("parse rrdcached address %q: %w", s, err)
	}
	if host, _, _ := net.SplitHostPort(addr); network == "tcp" && host == "" {
		return Address{}, fmt.Errorf("parse rrdcached address %q: no host (a listener's \":PORT\" is no peer)", s)
	}
	return Address{network, addr}, nil
}
