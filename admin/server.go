package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server timeouts. WriteTimeout leaves room for FlushTimeout and
// GraphTimeout, which bound the slow handlers.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 30 * time.Second
	idleTimeout       = 2 * time.Minute
	writeSlack        = 30 * time.Second
	maxHeaderBytes    = 64 << 10
)

// Server serves the admin handler on one listener. Create it with NewServer;
// its methods are safe for concurrent use.
type Server struct {
	o   Options
	srv *http.Server

	mu       sync.Mutex
	ln       net.Listener
	started  bool
	done     chan struct{} // closed when Serve returned
	serveErr error
	stopOnce sync.Once
	stopErr  error
}

// NewServer returns a server of NewHandler(b, o); nothing listens yet.
func NewServer(b Daemon, o Options) *Server {
	o = withDefaults(o)
	return &Server{
		o: o,
		srv: &http.Server{
			Handler:           NewHandler(b, o),
			ReadHeaderTimeout: readHeaderTimeout,
			ReadTimeout:       readTimeout,
			WriteTimeout:      max(o.FlushTimeout, o.GraphTimeout) + writeSlack,
			IdleTimeout:       idleTimeout,
			MaxHeaderBytes:    maxHeaderBytes,
			ErrorLog:          slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn),
		},
		done: make(chan struct{}),
	}
}

// Start listens on ln, or on Options.Listen when ln is nil, and serves on
// a goroutine of its own until Shutdown. It can be called once.
func (s *Server) Start(ln net.Listener) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		if ln != nil {
			ln.Close()
		}
		return errors.New("admin server already started")
	}
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", s.o.Listen); err != nil {
			return fmt.Errorf("admin listen on %s: %w", s.o.Listen, err)
		}
	}
	s.ln, s.started = ln, true
	go func() {
		defer close(s.done)
		err := s.srv.Serve(ln)
		if !errors.Is(err, http.ErrServerClosed) {
			s.o.Logger.Error("admin server stopped", "err", err)
			s.mu.Lock()
			s.serveErr = err
			s.mu.Unlock()
		}
	}()
	s.o.Logger.Info("admin server listening", "addr", ln.Addr().String())
	return nil
}

// Addr returns the address the server listens on ("127.0.0.1:8780"), or ""
// before Start.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Shutdown stops accepting connections, waits for requests in progress until
// ctx ends (then closes their connections), and waits for the serving
// goroutine. It is safe to call twice, and before Start; later calls return
// the first one's result.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		started := s.started
		s.started = true // a Start after Shutdown fails
		s.mu.Unlock()
		if !started {
			return
		}
		err := s.srv.Shutdown(ctx)
		if err != nil {
			s.srv.Close()
		}
		<-s.done
		s.mu.Lock()
		s.stopErr = errors.Join(err, s.serveErr)
		s.mu.Unlock()
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopErr
}
