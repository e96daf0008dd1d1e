package poller

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"github.com/gosnmp/gosnmp"
)

// The gosnmp clients of finished polls and discoveries are kept for the
// next ones. gosnmp's Connect allocates a 64 KiB receive buffer for each
// client and draws its first request ID from crypto/rand: a quarter of the
// bytes a poll of 48 interfaces allocates (BenchmarkPollBytes), garbage
// the collector would have to catch up with at every cycle. A kept client
// keeps its buffer and request IDs; each use gives it its target's
// settings and a UDP socket of its own, dialled as gosnmp dials one.
// An SNMPv3 poll takes a new client, connected by gosnmp's Connect: it
// checks and prepares the security parameters, and starts the message IDs
// at a random number of the client's (a kept client would start them at
// its own again). The clients are kept in a sync.Pool: within a
// cycle each serves poll after poll, and those left idle through two
// collections (between cycles) are let go with their buffers.

// connect returns a client of d with a socket to its agent, for one poll
// (probe: of a failing device) or discovery; give it back with disconnect.
func (p *Poller) connect(ctx context.Context, d *device, probe bool) (*gosnmp.GoSNMP, error) {
	g, kept := p.take(d.t.V3 != nil)
	p.setup(g, ctx, d, probe)
	var err error
	if !kept {
		err = g.Connect()
	} else {
		g.Conn, err = (&net.Dialer{Timeout: g.Timeout}).DialContext(ctx, "udp", net.JoinHostPort(g.Target, strconv.Itoa(int(g.Port))))
	}
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", d.t.Address(), err)
	}
	return g, nil
}

// disconnect closes g's socket and keeps g for another poll, without what
// its target gave it (community, security parameters, context).
func (p *Poller) disconnect(g *gosnmp.GoSNMP) {
	_ = g.Close()
	g.Community, g.SecurityParameters, g.Context = "", nil, nil
	g.ContextName, g.ContextEngineID = "", ""
	p.clients.Put(g)
}

// take returns a kept client (kept), or a new one, whose first connect
// must be gosnmp's: it has no receive buffer yet. An SNMPv3 poll (v3)
// takes a new one.
func (p *Poller) take(v3 bool) (g *gosnmp.GoSNMP, kept bool) {
	if !v3 {
		if g, ok := p.clients.Get().(*gosnmp.GoSNMP); ok {
			return g, true
		}
	}
	return &gosnmp.GoSNMP{}, false
}
