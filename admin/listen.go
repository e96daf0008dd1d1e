package admin

import (
	"fmt"
	"net"
	"strings"
)

// CheckListen reports whether addr is a TCP address Start can listen on,
// as far as its text tells: host:port ([v6]:port, :port), with a port of 0
// to 65535 or a service name of /etc/services. Whether the host resolves
// to a local address and the port is free is only known by listening.
func CheckListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("parse admin listen address %q: want host:port, [v6]:port or :port: %w", addr, err)
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("parse admin listen address %q: port %q: want 0 to 65535 or a service name", addr, port)
	}
	if strings.ContainsAny(host, " \t/@[]") {
		return fmt.Errorf("parse admin listen address %q: bad host %q", addr, host)
	}
	return nil
}
