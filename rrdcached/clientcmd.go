package rrdcached

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The client's commands, each one line of rrdcached's protocol. File names
// are as the server resolves them: relative to its base directory
// (rrdcached -b, spoold --rrd-dir), or absolute where it allows that.

// Update sends one UPDATE of file with updates ("1700000000:1:2", "N:U:3")
// in one line. rrdcached enqueues the values before the first it refuses,
// and its reply does not say which those were: read LAST or INFO after a
// FLUSH to learn what the file holds.
func (c *Client) Update(ctx context.Context, file string, updates ...string) error {
	if len(updates) == 0 {
		return nil
	}
	_, err := c.Do(ctx, UpdateLine(file, updates...))
	return err
}

// UpdateLine is the UPDATE command line of file with updates, as Update
// and a Batch send it.
func UpdateLine(file string, updates ...string) string {
	return Command{Name: "UPDATE", Args: append([]string{file}, updates...)}.Line()
}

// fileLine is the line of a command whose argument is one file.
func fileLine(name, file string, args ...string) string {
	return Command{Name: name, Args: append([]string{file}, args...)}.Line()
}

// Flush writes the file's updates queued in the server to the file and
// returns when it is done ("Nothing to flush" is success too).
func (c *Client) Flush(ctx context.Context, file string) error {
	_, err := c.Do(ctx, fileLine("FLUSH", file))
	return err
}

// Last returns LAST of file. rrdcached answers the newest update it has
// queued for the file (not necessarily written yet), rounded down to the
// file's step; the last update written to the file is Info's
// "last_update".
func (c *Client) Last(ctx context.Context, file string) (time.Time, error) {
	return c.timeReply(ctx, fileLine("LAST", file))
}

// First returns FIRST of file: the oldest time in its RRA number rra.
func (c *Client) First(ctx context.Context, file string, rra int) (time.Time, error) {
	return c.timeReply(ctx, fileLine("FIRST", file, strconv.Itoa(rra)))
}

func (c *Client) timeReply(ctx context.Context, line string) (time.Time, error) {
	r, err := c.Do(ctx, line)
	if err != nil {
		return time.Time{}, err
	}
	sec, err := strconv.ParseInt(strings.TrimSpace(r.Message), 10, 64)
	if err != nil {
		return time.Time{}, &PeerError{c.Peer(), commandName(line), fmt.Errorf("parse time %q: %w", r.Message, err)}
	}
	return time.Unix(sec, 0), nil
}

// Info returns INFO of file: rrdinfo's lines, read from the file by the
// server ("last_update" is the last update written to it).
func (c *Client) Info(ctx context.Context, file string) ([]InfoValue, error) {
	line := fileLine("INFO", file)
	r, err := c.Do(ctx, line)
	if err != nil {
		return nil, err
	}
	vals, err := ParseInfo(r.Lines)
	if err != nil {
		return nil, &PeerError{c.Peer(), commandName(line), err}
	}
	return vals, nil
}

// ParseInfo parses INFO's lines, "KEY TYPE VALUE" each.
func ParseInfo(lines []string) ([]InfoValue, error) {
	vals := make([]InfoValue, 0, len(lines))
	for _, l := range lines {
		key, rest, ok1 := strings.Cut(l, " ")
		typ, val, ok2 := strings.Cut(rest, " ")
		n, err := strconv.Atoi(typ)
		if !ok1 || !ok2 || err != nil || key == "" {
			return nil, fmt.Errorf("parse info line %q: want KEY TYPE VALUE", l)
		}
		vals = append(vals, InfoValue{Key: key, Type: n, Value: val})
	}
	return vals, nil
}

// Create sends CREATE of file with args; Sources are sent as -r, Template
// as -t.
func (c *Client) Create(ctx context.Context, file string, args CreateArgs) error {
	_, err := c.Do(ctx, CreateLine(file, args))
	return err
}

// CreateLine is the CREATE command line of file with args.
func CreateLine(file string, args CreateArgs) string {
	f := []string{file}
	if args.Step > 0 {
		f = append(f, "-s", strconv.FormatInt(int64(args.Step/time.Second), 10))
	}
	if !args.Begin.IsZero() {
		f = append(f, "-b", strconv.FormatInt(args.Begin.Unix(), 10))
	}
	if args.NoOverwrite {
		f = append(f, "-O")
	}
	for _, s := range args.Sources {
		f = append(f, "-r", s)
	}
	if args.Template != "" {
		f = append(f, "-t", args.Template)
	}
	f = append(f, args.Defs...)
	return Command{Name: "CREATE", Args: f}.Line()
}

// Ping sends PING; the server answers PONG.
func (c *Client) Ping(ctx context.Context) error {
	r, err := c.Do(ctx, "PING")
	if err == nil && r.Message != "PONG" {
		err = &PeerError{c.Peer(), "PING", fmt.Errorf("answered %q, not PONG", r.Message)}
	}
	return err
}

// Stats returns STATS: "Name: Value" lines.
func (c *Client) Stats(ctx context.Context) ([]StatsValue, error) {
	r, err := c.Do(ctx, "STATS")
	if err != nil {
		return nil, err
	}
	st := make([]StatsValue, 0, len(r.Lines))
	for _, l := range r.Lines {
		name, val, ok := strings.Cut(l, ": ")
		n, err := strconv.ParseUint(val, 10, 64)
		if !ok || err != nil {
			return nil, &PeerError{c.Peer(), "STATS", fmt.Errorf("parse stats line %q: want NAME: NUMBER", l)}
		}
		st = append(st, StatsValue{Name: name, Value: n})
	}
	return st, nil
}

// Quit sends QUIT (the server closes the connection without a reply) and
// closes the client's end.
func (c *Client) Quit(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn == nil {
		return nil
	}
	if d, ok := ctx.Deadline(); ok {
		c.conn.SetWriteDeadline(d)
	}
	_, werr := c.conn.Write([]byte("QUIT\n"))
	cerr := c.drop()
	if werr != nil {
		return &PeerError{c.Peer(), "QUIT", werr}
	}
	if cerr != nil {
		return &PeerError{c.Peer(), "QUIT", cerr}
	}
	return nil
}
