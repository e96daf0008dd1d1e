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
	// Interfaces is each device's interface count: the rows of its ifTable
	// and ifXTable.
	Interfaces int
	// Numbering is how devices number their interfaces: Contiguous
	// (ifIndex 1..Interfaces) or Vendor (as real gear does).
	Numbering Numbering
	// Down is the fraction of each device's interfaces that are down (admin
	// or only oper down), whose counters stay flat.
	Down float64
	// Dead, Slow, Missing, Wrap, Restart, NoHC, Renumber and Rename are
	// the fractions (0 to 1) of devices with each Behavior, spread evenly
	// over the device indexes.
	Dead, Slow, Missing, Wrap, Restart, NoHC, Renumber, Rename float64
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
	// MaxMessageSize is the largest response in bytes, as an agent's
	// maximum message size (v1 and v2c requests carry none): a Get or
	// GetNext response that would be larger is tooBig, a GetBulk response
	// is cut short. 0 is 65507, the largest UDP payload; at least 484.
	MaxMessageSize int
	// MaxBulkVarbinds caps the varbinds of a GetBulk response, as agents
	// cap max-repetitions; 0 is 1000.
	MaxBulkVarbinds int
}

const (
	defaultMaxMessageSize  = 65507
	minMessageSize         = 484 // RFC 3417: every agent takes messages this large
	defaultMaxBulkVarbinds = 1000
	maxBulkVarbinds        = 100_000
)

// DefaultOptions returns 1000 well-behaved devices with 48 interfaces
// numbered 1..48 (as the legacy if-mib:<n> profile polls them) on
// 127.0.0.1:1161, with a 2 s delay for slow devices, wraps 10 minutes after
// boot and restarts every hour when those fractions are set.
func DefaultOptions() Options {
	return Options{
		Addr:            "127.0.0.1:1161",
		Devices:         1000,
		Prefix:          "dev",
		Interfaces:      48,
		SlowDelay:       2 * time.Second,
		WrapAfter:       10 * time.Minute,
		RestartEvery:    time.Hour,
		Epoch:           time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
		MaxMessageSize:  defaultMaxMessageSize,
		MaxBulkVarbinds: defaultMaxBulkVarbinds,
	}
}

func (o *Options) check() error {
	for _, f := range []float64{o.Down, o.Dead, o.Slow, o.Missing, o.Wrap, o.Restart, o.NoHC, o.Renumber, o.Rename} {
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
	case o.Numbering != Contiguous && o.Numbering != Vendor:
		return fmt.Errorf("check simulate options: interface numbering %d unknown", o.Numbering)
	case o.MaxMessageSize < minMessageSize || o.MaxMessageSize > defaultMaxMessageSize:
		return fmt.Errorf("check simulate options: max message size %d, want %d to %d", o.MaxMessageSize, minMessageSize, defaultMaxMessageSize)
	case o.MaxBulkVarbinds < 1 || o.MaxBulkVarbinds > maxBulkVarbinds:
		return fmt.Errorf("check simulate options: max bulk varbinds %d, want 1 to %d", o.MaxBulkVarbinds, maxBulkVarbinds)
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
	Gets         uint64 // Get requests answered
	GetNexts     uint64 // GetNext requests answered
	GetBulks     uint64 // GetBulk requests answered
	TooBig       uint64 // responses tooBig or, for GetBulk, cut short by MaxMessageSize
}

type counters struct {
	requests, responses, dropped, delayed, badCommunity, decodeErrors, varbinds atomic.Uint64
	gets, getNexts, getBulks, tooBig                                            atomic.Uint64
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
	if opts.MaxMessageSize == 0 {
		opts.MaxMessageSize = defaultMaxMessageSize
	}
	if opts.MaxBulkVarbinds == 0 {
		opts.MaxBulkVarbinds = defaultMaxBulkVarbinds
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
		Gets: c.gets.Load(), GetNexts: c.getNexts.Load(), GetBulks: c.getBulks.Load(), TooBig: c.tooBig.Load(),
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
