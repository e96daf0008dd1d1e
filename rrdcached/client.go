package rrdcached

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ClientOptions configure a Client.
type ClientOptions struct {
	// DialTimeout bounds a connection attempt. Default 5 s.
	DialTimeout time.Duration
	// Timeout bounds a command whose context has no deadline. Default 60 s.
	Timeout time.Duration
}

// DefaultClientOptions returns the defaults documented on ClientOptions.
func DefaultClientOptions() ClientOptions {
	return ClientOptions{DialTimeout: 5 * time.Second, Timeout: time.Minute}
}

// MaxLine is the longest command line rrdcached takes (RRD_CMD_MAX,
// newline included); Client refuses longer ones instead of sending them.
const MaxLine = 4096

// Client speaks rrdcached's protocol to one server over one connection,
// one command at a time (it is safe for concurrent use: commands wait for
// each other). It connects on the first command and again after any
// failure of the connection. A command that fails on a reused connection
// before any byte of its reply arrived (the server closed it meanwhile) is
// sent once more on a new one; an UPDATE so repeated with an explicit time
// is refused by rrdcached as not after the last update. It starts no
// goroutines.
type Client struct {
	addr Address
	o    ClientOptions

	mu   sync.Mutex
	conn net.Conn
	rd   *bufio.Reader
	used bool // conn has carried a command already
}

// NewClient returns a client of the server at addr (see ParseAddress). It
// does not connect yet.
func NewClient(addr string, o ClientOptions) (*Client, error) {
	a, err := ParseAddress(addr)
	if err != nil {
		return nil, err
	}
	if o.DialTimeout <= 0 || o.Timeout <= 0 {
		return nil, fmt.Errorf("new rrdcached client of %s: dial timeout %s and timeout %s must be positive", a, o.DialTimeout, o.Timeout)
	}
	return &Client{addr: a, o: o}, nil
}

// Peer returns the server's address as "unix:PATH" or "tcp:HOST:PORT".
func (c *Client) Peer() string { return c.addr.String() }

// Close closes the connection, if any. The client may still be used: the
// next command connects again.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drop()
}

// drop closes the connection; c.mu is held.
func (c *Client) drop() error {
	if c.conn == nil {
		return nil
	}
	err := c.conn.Close()
	c.conn, c.rd, c.used = nil, nil, false
	return err
}

// RefusedError is a command the server refused, as a client sees it: the
// status line was negative. Message is the server's text after the status.
// (ReplyError is the server side's: a Backend's error with rrdcached's
// wording.)
type RefusedError struct {
	Peer    string
	Command string // the command's name and file, not its values
	Message string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("rrdcached %s refused %s: %s", e.Peer, e.Command, e.Message)
}

// PeerError is a failure to talk to the server: it could not be reached,
// the connection broke or timed out, or the reply did not parse.
type PeerError struct {
	Peer    string
	Command string
	Err     error
}

func (e *PeerError) Error() string {
	return fmt.Sprintf("send %s to rrdcached %s: %v", e.Command, e.Peer, e.Err)
}

func (e *PeerError) Unwrap() error { return e.Err }

// BatchError is one command of a BATCH the server refused; Command is its
// number as rrdcached counts it (the first command after BATCH is 1).
type BatchError struct {
	Command int
	Message string
}

// Do sends one command line (without its newline) and returns the reply.
// A negative status is returned as a *RefusedError along with the reply.
func (c *Client) Do(ctx context.Context, line string) (Reply, error) {
	name := commandName(line)
	if err := checkLine(line); err != nil {
		return Reply{}, &PeerError{c.Peer(), name, err}
	}
	var r Reply
	err := c.exchange(ctx, name, func(w *bufio.Writer, rd *bufio.Reader, got *bool) error {
		if _, err := w.WriteString(line + "\n"); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		var err error
		r, err = readReply(rd, got)
		return err
	})
	if err != nil {
		return r, err
	}
	if r.Status < 0 {
		return r, &RefusedError{c.Peer(), name, r.Message}
	}
	return r, nil
}

// Batch sends cmds (lines without newlines) in one BATCH and returns the
// commands the server refused, by their numbers; the error is for the
// batch as a whole (the connection, a refused BATCH).
func (c *Client) Batch(ctx context.Context, cmds []string) ([]BatchError, error) {
	for _, l := range cmds {
		if err := checkLine(l); err != nil {
			return nil, &PeerError{c.Peer(), "BATCH", err}
		}
	}
	var r Reply
	err := c.exchange(ctx, "BATCH", func(w *bufio.Writer, rd *bufio.Reader, got *bool) error {
		if _, err := w.WriteString("BATCH\n"); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		start, err := readReply(rd, got)
		if err != nil {
			return err
		}
		if start.Status < 0 {
			r = start
			return nil
		}
		for _, l := range cmds {
			w.WriteString(l)
			w.WriteByte('\n')
		}
		w.WriteString(".\n")
		if err := w.Flush(); err != nil {
			return err
		}
		r, err = readReply(rd, got)
		return err
	})
	if err != nil {
		return nil, err
	}
	if r.Status < 0 {
		return nil, &RefusedError{c.Peer(), "BATCH", r.Message}
	}
	errs := make([]BatchError, 0, len(r.Lines))
	for _, l := range r.Lines {
		num, msg, _ := strings.Cut(l, " ")
		n, err := strconv.Atoi(num)
		if err != nil {
			c.Close() // the reply is not rrdcached's: start afresh
			return nil, &PeerError{c.Peer(), "BATCH", fmt.Errorf("parse error line %q: %w", l, err)}
		}
		errs = append(errs, BatchError{n, msg})
	}
	return errs, nil
}

// exchange runs one command on the connection (dialing if needed) under
// ctx's deadline, or Timeout. A failure drops the connection; one on a
// reused connection before any reply byte arrived is tried once more.
func (c *Client) exchange(ctx context.Context, name string, run func(*bufio.Writer, *bufio.Reader, *bool) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(c.o.Timeout)
	}
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return &PeerError{c.Peer(), name, err}
		}
		if err := c.dial(ctx, deadline); err != nil {
			return &PeerError{c.Peer(), name, err}
		}
		reused := c.used
		c.used = true
		if err := c.conn.SetDeadline(deadline); err != nil {
			c.drop()
			return &PeerError{c.Peer(), name, err}
		}
		conn := c.conn
		stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
		got := false
		err := run(bufio.NewWriter(c.conn), c.rd, &got)
		stop()
		if err == nil {
			return nil
		}
		c.drop()
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%w)", ctx.Err(), err)
		}
		if !reused || got || attempt > 0 || ctx.Err() != nil || !isBrokenConn(err) {
			return &PeerError{c.Peer(), name, err}
		}
	}
}

// dial connects if there is no connection; c.mu is held.
func (c *Client) dial(ctx context.Context, deadline time.Time) error {
	if c.conn != nil {
		return nil
	}
	d := net.Dialer{Timeout: c.o.DialTimeout, Deadline: deadline}
	conn, err := d.DialContext(ctx, c.addr.Network, c.addr.Addr)
	if err != nil {
		return err
	}
	c.conn, c.rd, c.used = conn, bufio.NewReader(conn), false
	return nil
}

// isBrokenConn reports whether err says the server closed the connection.
func isBrokenConn(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "reset by peer") ||
		strings.Contains(err.Error(), "broken pipe")
}

// readReply reads one reply (ReadReply); *got is set once a byte of it
// arrived.
func readReply(rd *bufio.Reader, got *bool) (Reply, error) {
	if _, err := rd.Peek(1); err != nil {
		return Reply{}, fmt.Errorf("read reply: %w", err)
	}
	*got = true
	return ReadReply(rd)
}

// checkLine refuses a line rrdcached would cut or misread.
func checkLine(l string) error {
	switch {
	case strings.ContainsAny(l, "\n\x00"):
		return errors.New("command holds a newline or NUL")
	case len(l)+1 > MaxLine:
		return fmt.Errorf("command of %d bytes, rrdcached takes at most %d", len(l)+1, MaxLine)
	}
	return nil
}

// commandName is the command's name and its first argument (the file),
// for errors: never the values.
func commandName(line string) string {
	f := strings.SplitN(line, " ", 3)
	if len(f) >= 2 {
		return f[0] + " " + f[1]
	}
	return f[0]
}
