package rrdcached

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spoold/spoold/internal/optcheck"
)

// Options configure a Server.
type Options struct {
	// Dir is the RRD directory (rrdcached -b DIR -B): every file name is
	// resolved beneath it (see PathResolver). It must exist.
	Dir string
	// Listeners are the sockets to serve; none is allowed (a server that
	// listens nowhere).
	Listeners []ListenerOptions
	// MaxLine is the longest request line accepted, its line end not
	// counted. A longer line gets "-1 Line too long" and the connection is
	// closed. Default 8190: rrdcached's read buffer (2 × RRD_CMD_MAX) less
	// "\r\n"; rrdcached closes a connection with a longer line silently.
	MaxLine int
	// MaxBatch bounds the commands of one BATCH; the command over it gets
	// "-1 Batch too large" and the connection is closed (the commands
	// before it were carried out). Default 100,000 (rrdcached: no limit).
	MaxBatch int
	// MaxBatchErrorBytes bounds the error lines one BATCH keeps for its
	// answer (their bytes as sent, "<n> <message>\n"): the command whose
	// error would take them over gets "-1 Batch too large: its error lines
	// take more than N bytes." and the connection is closed (the commands
	// before it were carried out). A BATCH keeps nothing else: its commands
	// are carried out as they arrive. So one connection holds at most this
	// much for its batch, and the server MaxConns times it. Default 1 MiB
	// (rrdcached: no limit).
	MaxBatchErrorBytes int
	// MaxFetchBytes bounds what one FETCH or FETCHBIN reads: the values
	// the file's archive holds for the range asked, 8 bytes each, rows ×
	// every data source of the file (librrd reads them all, whatever
	// columns are named). The backend estimates them from the file's header
	// before it reads; over the bound the reply is "-1 FETCH too large: ..."
	// saying how much the range needs. The reply itself is written as it is
	// formatted, never built whole. 0: no bound. Default 32 MiB, four
	// million values (rrdcached: no limit).
	MaxFetchBytes int64
	// MaxFetches bounds the FETCH and FETCHBIN commands carried out at
	// once, all connections together; one more waits for one of them to
	// be answered. So FETCH holds at most MaxFetches × 2 × MaxFetchBytes
	// (librrd's values and spoold's copy of them). Default 4.
	MaxFetches int
	// MaxConns bounds the open connections of all listeners together; a
	// connection over it gets "-1 Too many connections" and is closed.
	// Each listener without its own ListenerOptions.MaxConns gets an equal
	// share of what the others' leave of it, so that the clients of one
	// socket (remote readers on TCP) never lock out those of another (a
	// local writer on the unix socket). Default 1024.
	MaxConns int
	// IdleTimeout closes a connection that sends no complete line for
	// this long (rrdcached: never). Default 15 minutes, more than any
	// client's interval between updates (collectd, Munin: 5 minutes).
	IdleTimeout time.Duration
	// WriteTimeout closes a connection that does not take a reply within
	// this long, so a client that stops reading cannot hold the server.
	// Default 30 s.
	WriteTimeout time.Duration
	// ShutdownGrace is how long Close lets the commands in flight run; then
	// it cancels the context of their Backend calls (a FLUSH waiting for a
	// writer that no longer runs, say) and waits for them to return.
	// Default 30 s.
	ShutdownGrace time.Duration
	// LogInterval is the least time between two log lines of one refusal
	// reason; the refusals in between are counted and the next line says
	// how many. Default 10 s.
	LogInterval time.Duration
	// Now is the clock for FETCH's relative times; nil means time.Now.
	Now func() time.Time
}

// DefaultOptions returns the defaults documented on Options (Dir and
// Listeners are left empty).
func DefaultOptions() Options {
	return Options{
		MaxLine:            8190,
		MaxBatch:           100000,
		MaxBatchErrorBytes: 1 << 20,
		MaxFetchBytes:      32 << 20,
		MaxFetches:         4,
		MaxConns:           1024,
		IdleTimeout:        15 * time.Minute,
		WriteTimeout:       30 * time.Second,
		ShutdownGrace:      30 * time.Second,
		LogInterval:        10 * time.Second,
	}
}

// Validate reports the first option out of range, as a
// *optcheck.FieldError naming its field; New calls it.
func (o Options) Validate() error {
	bad := func(field, msg string) error {
		return fmt.Errorf("check rrdcached server options: %w", optcheck.Errorf(field, msg))
	}
	switch {
	case o.Dir == "":
		return bad("Dir", "must not be empty")
	case o.MaxLine < 16:
		return bad("MaxLine", "must be at least 16")
	case o.MaxBatch < 1:
		return bad("MaxBatch", "must be at least 1")
	case o.MaxConns < 1:
		return bad("MaxConns", "must be at least 1")
	case o.MaxFetchBytes < 0:
		return bad("MaxFetchBytes", "must be >= 0")
	case o.MaxFetches < 1:
		return bad("MaxFetches", "must be at least 1")
	case o.MaxBatchErrorBytes < maxBatchErrorLen+16:
		return bad("MaxBatchErrorBytes", fmt.Sprintf("must be at least %d (one error line)", maxBatchErrorLen+16))
	case o.IdleTimeout <= 0:
		return bad("IdleTimeout", "must be positive")
	case o.WriteTimeout <= 0:
		return bad("WriteTimeout", "must be positive")
	case o.LogInterval < 0:
		return bad("LogInterval", "must be >= 0")
	case o.ShutdownGrace < 0:
		return bad("ShutdownGrace", "must be >= 0")
	}
	for _, l := range o.Listeners {
		if _, _, err := ParseSpec(l.Spec); err != nil {
			return bad("Listeners", err.Error())
		}
		if l.MaxConns < 0 {
			return bad("Listeners.MaxConns", fmt.Sprintf("must be >= 0, got %d for %s", l.MaxConns, l.Spec))
		}
	}
	return nil
}

// A Server serves rrdcached's protocol on its listeners and hands the
// commands to a Backend.
type Server struct {
	opts    Options
	backend Backend
	log     *slog.Logger
	m       *metrics
	res     *PathResolver
	limiter *logLimiter
	ctx     context.Context // the Backend calls'; canceled when Close is done

	listeners []*listener
	open      atomic.Int64  // connections open, all listeners
	fetches   chan struct{} // a slot per FETCH in progress (MaxFetches)
	wg        sync.WaitGroup

	mu      sync.Mutex
	closing bool
	conns   map[*conn]struct{}

	closeOnce sync.Once
	closeErr  error
	cancel    context.CancelFunc
}

// listener is one listening socket and its settings.
type listener struct {
	net.Listener
	spec  string
	perms Permissions
	max   int
	open  atomic.Int64
}

// New opens the listeners of opts and starts serving them. logger nil
// discards; registerer nil registers no metrics.
func New(opts Options, backend Backend, logger *slog.Logger, reg prometheus.Registerer) (*Server, error) {
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("configure rrdcached server: %w", err)
	}
	if backend == nil {
		return nil, errors.New("configure rrdcached server: no backend")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("register rrdcached server metrics: %w", err)
	}
	res, err := NewPathResolver(opts.Dir)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{opts: opts, backend: backend, log: logger, m: m, res: res, ctx: ctx, cancel: cancel,
		limiter: newLogLimiter(opts.LogInterval), conns: map[*conn]struct{}{}, fetches: make(chan struct{}, opts.MaxFetches)}
	limits := listenerLimits(opts)
	for i, lo := range opts.Listeners {
		nl, err := listen(lo)
		if err != nil {
			s.closeListeners()
			res.Close()
			cancel()
			return nil, err
		}
		network, _, _ := ParseSpec(lo.Spec)
		s.listeners = append(s.listeners, &listener{Listener: nl, spec: lo.Spec, perms: lo.permissions(network), max: limits[i]})
	}
	for _, l := range s.listeners {
		s.wg.Add(1)
		go s.accept(l)
	}
	return s, nil
}

// Addrs returns the listeners' addresses, in the order of Options.Listeners
// (the port a "tcp:127.0.0.1:0" listener got, for one).
func (s *Server) Addrs() []net.Addr {
	a := make([]net.Addr, len(s.listeners))
	for i, l := range s.listeners {
		a[i] = l.Addr()
	}
	return a
}

// Dir returns the RRD directory's real path, as replies print it.
func (s *Server) Dir() string { return s.res.Dir() }

// Close stops accepting, lets each connection finish the command it is
// carrying out (and send its reply, within WriteTimeout; after
// ShutdownGrace the command's Backend call is canceled), closes every
// connection, and returns when every goroutine of the server has ended.
// It is safe to call more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		for c := range s.conns {
			c.interrupt()
		}
		s.mu.Unlock()
		s.closeErr = s.closeListeners()
		done := make(chan struct{})
		go func() { s.wg.Wait(); close(done) }()
		grace := time.NewTimer(s.opts.ShutdownGrace)
		select {
		case <-done:
		case <-grace.C:
			s.log.Warn("rrdcached protocol: commands still running after the shutdown grace; canceling them", "grace", s.opts.ShutdownGrace)
			s.cancel()
			<-done
		}
		grace.Stop()
		s.cancel()
		if err := s.res.Close(); err != nil && s.closeErr == nil {
			s.closeErr = err
		}
	})
	return s.closeErr
}

func (s *Server) closeListeners() error {
	var errs []error
	for _, l := range s.listeners {
		if err := l.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close listener %s: %w", l.spec, err))
		}
	}
	return errors.Join(errs...)
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// accept is one listener's goroutine: it accepts until Close, refusing
// connections over the limits.
func (s *Server) accept(l *listener) {
	defer s.wg.Done()
	backoff := 5 * time.Millisecond
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.isClosing() {
				return
			}
			// EMFILE and the like: wait a little, as net/http does.
			s.log.Warn("accept rrdcached connection", "listener", l.spec, "err", err)
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-s.ctx.Done():
				t.Stop()
				return
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		s.m.connections.WithLabelValues(l.spec).Inc()
		if reason, msg := s.overLimit(l); reason != "" {
			s.refuseConn(l, nc, reason, msg)
			continue
		}
		c := newConn(s, l, nc)
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			s.release(l)
			nc.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		s.m.open.WithLabelValues(l.spec).Inc()
		go c.serve()
	}
}

// listenerLimits returns each listener's limit on its open connections:
// its MaxConns, or an equal share (at least 1) of what the server's
// MaxConns leaves after the listeners that have one.
func listenerLimits(o Options) []int {
	left, shared := o.MaxConns, 0
	for _, l := range o.Listeners {
		if l.MaxConns > 0 {
			left -= l.MaxConns
		} else {
			shared++
		}
	}
	limits := make([]int, len(o.Listeners))
	for i, l := range o.Listeners {
		limits[i] = l.MaxConns
		if l.MaxConns == 0 {
			limits[i] = max(1, left/shared)
		}
	}
	return limits
}

// overLimit takes a connection slot, or returns why there is none.
func (s *Server) overLimit(l *listener) (reason, msg string) {
	if n := s.open.Add(1); n > int64(s.opts.MaxConns) {
		s.open.Add(-1)
		return RefuseMaxConns, fmt.Sprintf("Too many connections: the server's limit of %d is reached.", s.opts.MaxConns)
	}
	if n := l.open.Add(1); n > int64(l.max) {
		l.open.Add(-1)
		s.open.Add(-1)
		return RefuseListenerMaxConns, fmt.Sprintf("Too many connections: the limit of %d on this socket is reached.", l.max)
	}
	return "", ""
}

func (s *Server) release(l *listener) {
	l.open.Add(-1)
	s.open.Add(-1)
}

// refuseConn answers a connection over a limit with one error line and
// closes it.
func (s *Server) refuseConn(l *listener, nc net.Conn, reason, msg string) {
	s.refused(reason, l.spec, peerName(nc), msg)
	nc.SetWriteDeadline(time.Now().Add(time.Second))
	nc.Write(Reply{Status: -1, Message: msg}.Append(nil))
	nc.Close()
}

// refused counts a refusal and logs it at a bounded rate.
func (s *Server) refused(reason, listener, peer, detail string) {
	s.m.refusals.WithLabelValues(reason, listener).Inc()
	if ok, skipped := s.limiter.allow(reason); ok {
		s.log.Warn("rrdcached protocol: refused", "reason", reason, "listener", listener, "peer", peer, "detail", detail, "unlogged_before", skipped)
	}
}

// forget drops an ended connection.
func (s *Server) forget(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.release(c.l)
	s.m.open.WithLabelValues(c.l.spec).Dec()
	s.wg.Done()
}

// logLimiter lets one log line per reason through per interval.
type logLimiter struct {
	interval time.Duration
	mu       sync.Mutex
	last     map[string]time.Time
	skipped  map[string]int
}

func newLogLimiter(interval time.Duration) *logLimiter {
	return &logLimiter{interval: interval, last: map[string]time.Time{}, skipped: map[string]int{}}
}

// allow reports whether a line for reason may be logged now and how many
// were not logged since the last one.
func (ll *logLimiter) allow(reason string) (bool, int) {
	ll.mu.Lock()
	defer ll.mu.Unlock()
	now := time.Now()
	if last, ok := ll.last[reason]; ok && now.Sub(last) < ll.interval {
		ll.skipped[reason]++
		return false, 0
	}
	n := ll.skipped[reason]
	ll.last[reason], ll.skipped[reason] = now, 0
	return true, n
}

// peerName names the other end: its address on TCP, its pid and uid on a
// unix socket (SO_PEERCRED).
func peerName(nc net.Conn) string {
	if uc, ok := nc.(*net.UnixConn); ok {
		if cred := peerCred(uc); cred != "" {
			return cred
		}
		return "unix:" + strings.TrimSpace(uc.LocalAddr().String())
	}
	return nc.RemoteAddr().String()
}
