package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/spoold/spoold/rrdcached"
	"github.com/spoold/spoold/rrdcached/spoolbackend"
	"github.com/spoold/spoold/rrdwriter"
)

// The rrdcached protocol: the server of package rrdcached on the --listen
// sockets, carrying out its commands with spoolbackend's Backend on the
// daemon's spool, index and writer. This file only wires them.

// protocolConfig is what the protocol's flags set: the server's options,
// and the socket settings the next --listen flags take (as rrdcached's -m,
// -s and -P apply to the -l after them).
type protocolConfig struct {
	server rrdcached.Options
	next   rrdcached.ListenerOptions
}

func defaultProtocolConfig() protocolConfig {
	return protocolConfig{server: rrdcached.DefaultOptions()}
}

func addProtocolFlags(fs *pflag.FlagSet, c *protocolConfig) {
	fs.Var(&listenValue{c}, "listen", "serve rrdcached's protocol on unix:PATH or tcp:ADDR:PORT (rrdcached -l); repeatable, or comma-separated; none by default")
	fs.Var(&modeValue{&c.next.Mode}, "listen-mode", "mode of the unix sockets of the --listen flags after it, octal (rrdcached -m; 0 = as the umask leaves it)")
	fs.StringVar(&c.next.Group, "listen-group", "", "group of the unix sockets of the --listen flags after it, a name or number (rrdcached -s)")
	fs.Var(&permValue{&c.next.Permissions}, "listen-permissions", "commands the sockets of the --listen flags after it accept, comma-separated (rrdcached -P); empty: all on unix sockets, the read commands on TCP")
	fs.IntVar(&c.next.MaxConns, "listen-max-connections", 0, "most open connections of each socket of the --listen flags after it (0 = an equal share of what the sockets with a limit leave of --rrdcached-max-connections)")
	fs.IntVar(&c.server.MaxLine, "rrdcached-max-line", c.server.MaxLine, "longest protocol request line in bytes; a longer one closes the connection")
	fs.IntVar(&c.server.MaxBatch, "rrdcached-max-batch", c.server.MaxBatch, "most commands in one BATCH; the one over it closes the connection")
	fs.IntVar(&c.server.MaxBatchErrorBytes, "rrdcached-max-batch-error-bytes", c.server.MaxBatchErrorBytes, "most bytes of error lines one BATCH keeps for its answer; the command over it closes the connection")
	fs.Int64Var(&c.server.MaxFetchBytes, "rrdcached-max-fetch-bytes", c.server.MaxFetchBytes, "most bytes of values one FETCH may read (8 a value, every data source of the file, estimated from its header); 0 = no limit")
	fs.IntVar(&c.server.MaxFetches, "rrdcached-max-fetches", c.server.MaxFetches, "most FETCH commands carried out at once, all connections together; more wait")
	fs.IntVar(&c.server.MaxConns, "rrdcached-max-connections", c.server.MaxConns, "most open protocol connections, all sockets together")
	fs.DurationVar(&c.server.IdleTimeout, "rrdcached-idle-timeout", c.server.IdleTimeout, "close a protocol connection that sends no complete line for this long")
	fs.DurationVar(&c.server.WriteTimeout, "rrdcached-write-timeout", c.server.WriteTimeout, "close a protocol connection that does not read a reply for this long")
}

// listenValue appends a listener with the socket settings given before it.
type listenValue struct{ c *protocolConfig }

func (v *listenValue) Type() string { return "spec" }
func (v *listenValue) String() string {
	specs := make([]string, len(v.c.server.Listeners))
	for i, l := range v.c.server.Listeners {
		specs[i] = l.Spec
	}
	return strings.Join(specs, ",")
}

// Set takes one spec, or several separated by commas (as String prints
// them); "" adds none.
func (v *listenValue) Set(s string) error {
	for _, spec := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' }) {
		if _, _, err := rrdcached.ParseSpec(spec); err != nil {
			return err
		}
		l := v.c.next
		l.Spec = spec
		v.c.server.Listeners = append(v.c.server.Listeners, l)
	}
	return nil
}

type modeValue struct{ p *os.FileMode }

func (v *modeValue) Type() string   { return "mode" }
func (v *modeValue) String() string { return fmt.Sprintf("%04o", uint32(*v.p)) }
func (v *modeValue) Set(s string) error {
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil || m > 0o777 {
		return fmt.Errorf("parse mode %q: want octal permission bits, 0 to 0777", s)
	}
	*v.p = os.FileMode(m)
	return nil
}

type permValue struct{ p *rrdcached.Permissions }

func (v *permValue) Type() string { return "commands" }
func (v *permValue) String() string {
	var names []string
	for n := range *v.p {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// Set parses an rrdcached -P list; "" is the default again.
func (v *permValue) Set(s string) (err error) {
	if s == "" {
		*v.p = nil
		return nil
	}
	*v.p, err = rrdcached.ParsePermissions(s)
	return err
}

// protocol is the running protocol server and its backend.
type protocol struct {
	backend *spoolbackend.Backend
	server  *rrdcached.Server
}

// newProtocolBackend returns the protocol's backend on the daemon's
// writer, spool, index and loader, with the writer's options wo: its RRD
// directory, clock, future tolerance and logger, and its profiles' keys
// claimed.
func (d *daemon) newProtocolBackend(wo rrdwriter.Options) (*spoolbackend.Backend, error) {
	o := spoolbackend.DefaultOptions()
	o.Dir, o.Now, o.FutureTolerance, o.Logger = wo.Dir, wo.Now, wo.FutureTolerance, wo.Logger
	o.Ready, o.FlushContext = d.ld, d.flushCtx
	o.Claimed = func(key string) bool { _, ok := wo.Layout(key); return ok }
	return spoolbackend.New(d.wr, d.sp, d.ix, o)
}

// startProtocol opens the --listen sockets and serves them; without any it
// does nothing. reg takes the server's metrics (nil, without the admin
// server: none).
func (d *daemon) startProtocol(reg *prometheus.Registry) error {
	o := d.cfg.protocol.serverOptions(d.cfg.writer.Dir)
	if len(o.Listeners) == 0 {
		return nil
	}
	var r prometheus.Registerer // a nil *Registry would be a non-nil Registerer
	if reg != nil {
		r = reg
	}
	s, err := rrdcached.New(o, d.proto.backend, d.component("rrdcached"), r)
	if err != nil {
		return fmt.Errorf("start rrdcached protocol: %w", err)
	}
	d.proto.server = s
	for i, a := range s.Addrs() {
		d.log.Info("rrdcached protocol listening", "listen", o.Listeners[i].Spec, "addr", a.String())
	}
	return nil
}

// stopProtocol closes the sockets after the commands being carried out
// have replied; it is safe to call twice.
func (d *daemon) stopProtocol() {
	if d.proto.server == nil {
		return
	}
	if err := d.proto.server.Close(); err != nil {
		d.log.Warn("stop rrdcached protocol", "err", err)
	}
}

// serverOptions are the server's options as startProtocol gives them to
// rrdcached.New.
func (c *protocolConfig) serverOptions(rrdDir string) rrdcached.Options {
	o := c.server
	o.Dir = rrdDir
	return o
}
