package simulate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gosnmp/gosnmp"
)

// Options configure a simulated fleet.
type Options struct {
	// Addr is the UDP address to listen on; its IP must be a loopback
	// address. Port 0 picks a free port (see Simulator.Addr).
	Addr string
	// Devices is the number of devices, named Prefix00000, Prefix00001...
	Devices int
	// Prefix starts every device name (and community).
	Prefix string
	// Interfaces is each device's interface count (ifIndex 1..Interfaces).
	Interfaces int
	// Dead, Slow, Missing, Wrap and Restart are the fractions (0 to 1) of
	// devices with each Behavior, spread evenly over the device indexes.
	Dead, Slow, Missing, Wrap, Restart float64
	// SlowDelay is a slow device's response delay.
	SlowDelay time.Duration
	// WrapAfter is the uptime at which a wrapping device's counters wrap.
	WrapAfter time.Duration
	// RestartEvery is the reboot period of a restarting device.
	RestartEvery time.Duration
	// Epoch anchors the devices' boot times (1 to 30 days before it).
	Epoch time.Time
	// Now is the fleet's clock; nil is time.Now.
	Now func() time.Time
	// Workers is the goroutines reading the socket; 0 is GOMAXPROCS.
	Workers int
}

// DefaultOptions returns 1000 well-behaved devices with 10 interfaces on
// 127.0.0.1:1161, with a 2 s delay for slow devices, wraps 10 minutes after
// boot and restarts every hour when those fractions are set.
func DefaultOptions() Options {
	return Options{
		Addr:         "127.0.0.1:1161",
		Devices:      1000,
		Prefix:       "dev",
		Interfaces:   10,
		SlowDelay:    2 * time.Second,
		WrapAfter:    10 * time.Minute,
		RestartEvery: time.Hour,
		Epoch:        time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
	}
}

func (o *Options) check() error {
	for _, f := range []float64{o.Dead, o.Slow, o.Missing, o.Wrap, o.Restart} {
		if f < 0 || f > 1 || f != f {
			return fmt.Errorf("check simulate options: fraction %v not in [0, 1]", f)
		}
	}
	switch {
	case o.Devices < 1 || o.Devices > 10_000_000:
		return fmt.Errorf("check simulate options: %d devices, want 1 to 10000000", o.Devices)
	case o.Interfaces < 0 || o.Interfaces > 100_000:
		return fmt.Errorf("check simulate options: %d interfaces, want 0 to 100000", o.Interfaces)
	case o.Prefix == "":
		return errors.New("check simulate options: empty device name prefix")
	case o.SlowDelay < 0 || o.WrapAfter < 0 || o.RestartEvery < 0:
		return errors.New("check simulate options: negative duration")
	case o.Restart > 0 && o.RestartEvery == 0:
		return errors.New("check simulate options: restarting devices need a restart period")
	}
	return nil
}

// Stats count requests since Listen.
type Stats struct {
	Requests     uint64 // datagrams received
	Responses    uint64 // responses sent
	Dropped      uint64 // requests of dead devices
	Delayed      uint64 // responses of slow devices
	BadCommunity uint64 // requests for no device
	DecodeErrors uint64 // datagrams that are not SNMP v1/v2c requests
	Varbinds     uint64 // varbinds answered
}

type counters struct {
	requests, responses, dropped, delayed, badCommunity, decodeErrors, varbinds atomic.Uint64
}

// Simulator serves a Fleet on a UDP socket.
type Simulator struct {
	fleet *Fleet
	conn  *net.UDPConn
	log   *slog.Logger
	c     counters

	closeOnce sync.Once
	mu        sync.Mutex // guards timers and closed
	timers    map[*time.Timer]struct{}
	closed    bool
	pending   sync.WaitGroup // delayed responses being sent
}

// Listen validates opts, binds the UDP socket and returns the simulator;
// Serve answers requests. logger nil discards logs.
func Listen(opts Options, logger *slog.Logger) (*Simulator, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if err := opts.check(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ua, err := net.ResolveUDPAddr("udp", opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("resolve simulator address: %w", err)
	}
	if ua.IP == nil || !ua.IP.IsLoopback() {
		return nil, fmt.Errorf("listen on %s: the simulator listens on loopback addresses only", opts.Addr)
	}
	conn, err := net.ListenUDP("udp", ua)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", opts.Addr, err)
	}
	_ = conn.SetReadBuffer(8 << 20) // a burst of thousands of requests
	_ = conn.SetWriteBuffer(8 << 20)
	return &Simulator{fleet: newFleet(opts), conn: conn, log: logger, timers: map[*time.Timer]struct{}{}}, nil
}

// Addr returns the address the simulator listens on.
func (s *Simulator) Addr() *net.UDPAddr { return s.conn.LocalAddr().(*net.UDPAddr) }

// Fleet returns the simulated devices.
func (s *Simulator) Fleet() *Fleet { return s.fleet }

// Stats returns a snapshot of the counters.
func (s *Simulator) Stats() Stats {
	c := &s.c
	return Stats{
		Requests: c.requests.Load(), Responses: c.responses.Load(), Dropped: c.dropped.Load(),
		Delayed: c.delayed.Load(), BadCommunity: c.badCommunity.Load(),
		DecodeErrors: c.decodeErrors.Load(), Varbinds: c.varbinds.Load(),
	}
}

// Serve answers requests until ctx is done or Close is called, then closes
// the socket and waits for its goroutines. It returns nil after Close or
// ctx's end.
func (s *Simulator) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { s.Close() })
	defer stop()
	var wg sync.WaitGroup
	errs := make(chan error, s.fleet.opts.Workers)
	for range s.fleet.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.readLoop()
		}()
	}
	wg.Wait()
	s.Close()
	s.pending.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Close stops Serve; responses still delayed are dropped. It is safe to
// call twice.
func (s *Simulator) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		for t := range s.timers {
			if t.Stop() {
				s.pending.Done()
			}
		}
		clear(s.timers)
		s.mu.Unlock()
		err = s.conn.Close()
	})
	return err
}

func (s *Simulator) readLoop() error {
	dec := &gosnmp.GoSNMP{Version: gosnmp.Version2c} // the codec; one per reader
	buf := make([]byte, 65536)
	for {
		n, from, err := s.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return fmt.Errorf("read simulator socket: %w", err)
		}
		s.c.requests.Add(1)
		out, delay, ok := s.answer(dec, buf[:n])
		if !ok {
			continue
		}
		if delay > 0 {
			s.later(delay, out, from)
			continue
		}
		s.send(out, from)
	}
}

// send sends a response. It is counted before it leaves, so a client that
// has the answer never reads a count without it.
func (s *Simulator) send(out []byte, to netip.AddrPort) {
	s.c.responses.Add(1)
	if _, err := s.conn.WriteToUDPAddrPort(out, to); err != nil {
		s.c.responses.Add(^uint64(0))
	}
}

// later sends out to addr after delay, unless the simulator closes first.
func (s *Simulator) later(delay time.Duration, out []byte, to netip.AddrPort) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.c.delayed.Add(1)
	s.pending.Add(1)
	var t *time.Timer
	t = time.AfterFunc(delay, func() {
		defer s.pending.Done()
		s.mu.Lock()
		delete(s.timers, t)
		s.mu.Unlock()
		s.send(out, to)
	})
	s.timers[t] = struct{}{}
}

// answer decodes a request and encodes the response of its device; ok is
// false when nothing is to be sent.
func (s *Simulator) answer(dec *gosnmp.GoSNMP, req []byte) (out []byte, delay time.Duration, ok bool) {
	pkt, err := dec.SnmpDecodePacket(req)
	if err != nil || (pkt.Version != gosnmp.Version1 && pkt.Version != gosnmp.Version2c) {
		s.c.decodeErrors.Add(1)
		return nil, 0, false
	}
	f := s.fleet
	i, found := f.Index(pkt.Community)
	if !found {
		s.c.badCommunity.Add(1) // as an agent does: no answer to a wrong community
		return nil, 0, false
	}
	b := f.Behavior(i)
	if b.Dead {
		s.c.dropped.Add(1)
		return nil, 0, false
	}
	resp := f.respond(i, b, pkt, f.Now())
	s.c.varbinds.Add(uint64(len(resp.Variables)))
	out, err = resp.MarshalMsg()
	if err != nil {
		s.log.Error("encode simulated response", "device", f.Name(i), "err", err)
		return nil, 0, false
	}
	return out, b.Delay, true
}

// respond builds device i's response to pkt at time t. Only Get is
// supported; other requests get genErr.
func (f *Fleet) respond(i int, b Behavior, pkt *gosnmp.SnmpPacket, t time.Time) *gosnmp.SnmpPacket {
	resp := &gosnmp.SnmpPacket{
		Version: pkt.Version, Community: pkt.Community, PDUType: gosnmp.GetResponse,
		RequestID: pkt.RequestID, Variables: make([]gosnmp.SnmpPDU, len(pkt.Variables)),
	}
	if pkt.PDUType != gosnmp.GetRequest {
		resp.Error, resp.ErrorIndex = gosnmp.GenErr, 0
		for k, v := range pkt.Variables {
			resp.Variables[k] = gosnmp.SnmpPDU{Name: v.Name, Type: gosnmp.Null}
		}
		return resp
	}
	for k, v := range pkt.Variables {
		name := v.Name
		if len(name) > 0 && name[0] == '.' {
			name = name[1:]
		}
		resp.Variables[k] = f.value(i, b, name, t)
		if pkt.Version == gosnmp.Version1 && resp.Error == gosnmp.NoError {
			switch resp.Variables[k].Type {
			case gosnmp.NoSuchObject, gosnmp.NoSuchInstance, gosnmp.EndOfMibView:
				// v1 has no exceptions: the whole request fails with noSuchName.
				resp.Error, resp.ErrorIndex = gosnmp.NoSuchName, uint8(min(k+1, 255))
			}
		}
	}
	if resp.Error != gosnmp.NoError { // v1: the request's varbinds come back as sent
		for k, v := range pkt.Variables {
			resp.Variables[k] = gosnmp.SnmpPDU{Name: v.Name, Type: gosnmp.Null}
		}
	}
	return resp
}
