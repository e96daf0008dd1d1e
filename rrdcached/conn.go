package rrdcached

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// maxBatchErrorLen bounds one per-command error line kept for a BATCH's
// answer (rrdcached bounds a reply by RRD_CMD_MAX, 4096), so that a batch's
// answer holds at most MaxBatch of them, and at most MaxBatchErrorBytes.
const maxBatchErrorLen = 512

// conn is one client connection, served by its own goroutine.
type conn struct {
	s    *Server
	l    *listener
	nc   net.Conn
	peer string
	r    *bufio.Reader
	w    *bufio.Writer

	inBatch   bool
	batchN    int       // commands of the current BATCH so far, "." too (rrdcached's batch_cmd)
	batchErrs []string  // its error lines
	errBytes  int       // their bytes as sent, each "<n> <message>\n"
	updates   updateRun // its UPDATEs of one file not carried out yet

	// stream, when a command sets it, writes the rest of the reply it
	// returns, after its status line and Lines (FETCH's rows, formatted
	// as they are sent instead of built whole).
	stream func(*replyWriter)
}

func newConn(s *Server, l *listener, nc net.Conn) *conn {
	return &conn{s: s, l: l, nc: nc, peer: peerName(nc),
		r: bufio.NewReaderSize(nc, s.opts.MaxLine+2), w: bufio.NewWriter(nc)}
}

// interrupt wakes a read that waits for the client; Close calls it with
// Server.mu held, so armRead cannot undo it.
func (c *conn) interrupt() { c.nc.SetReadDeadline(time.Unix(1, 0)) }

// armRead sets the idle deadline for the next line, unless the server is
// closing. A line already in the buffer needs no read, so no new deadline.
func (c *conn) armRead() bool {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if c.s.closing {
		return false
	}
	if buf, _ := c.r.Peek(c.r.Buffered()); bytes.IndexByte(buf, '\n') < 0 {
		c.nc.SetReadDeadline(time.Now().Add(c.s.opts.IdleTimeout))
	}
	return true
}

// serve reads and carries out commands until the client leaves, a limit
// ends the connection, or the server closes.
func (c *conn) serve() {
	defer c.s.forget(c)
	defer c.nc.Close()
	defer c.runUpdates() // what the client sent is carried out
	for {
		if c.r.Buffered() == 0 && (!c.runUpdates() || !c.flush()) {
			return
		}
		if !c.armRead() {
			c.flush()
			return
		}
		line, ok := c.readLine()
		if !ok {
			c.flush()
			return
		}
		cmd, err := ParseCommand(line)
		if err != nil {
			// rrdcached closes such a connection without a word.
			c.s.refused(RefuseBrokenCommand, c.l.spec, c.peer, fmt.Sprintf("line %q", clip(line)))
			c.flush()
			return
		}
		if !c.dispatch(cmd) {
			c.flush()
			return
		}
	}
}

// readLine returns the next line without its line end, or false when the
// connection is to end (the reason is counted and answered here).
func (c *conn) readLine() ([]byte, bool) {
	line, err := c.r.ReadSlice('\n')
	switch {
	case err == nil:
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, c.tooLong()
	case errors.Is(err, os.ErrDeadlineExceeded):
		if !c.s.isClosing() {
			c.s.refused(RefuseIdleTimeout, c.l.spec, c.peer, fmt.Sprintf("no complete line in %s", c.s.opts.IdleTimeout))
		}
		return nil, false
	default:
		// EOF (a half-sent line is dropped, as rrdcached drops it) or a
		// reset: nothing to answer.
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, unix.ECONNRESET) {
			c.s.log.Info("read rrdcached request", "peer", c.peer, "listener", c.l.spec, "err", err)
		}
		return nil, false
	}
	line = line[:len(line)-1]
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if len(line) > c.s.opts.MaxLine {
		return nil, c.tooLong()
	}
	return line, true
}

func (c *conn) tooLong() bool {
	msg := fmt.Sprintf("Line too long: more than %d bytes.", c.s.opts.MaxLine)
	c.s.refused(RefuseLineTooLong, c.l.spec, c.peer, msg)
	c.send(Reply{Status: -1, Message: msg})
	return false
}

// dispatch carries out one command as rrdcached's handle_request does:
// the batch count, the command table, the listener's permissions, the
// context. It returns false when the connection is to end.
func (c *conn) dispatch(cmd Command) bool {
	if c.inBatch {
		c.batchN++
		if c.batchN > c.s.opts.MaxBatch && cmd.Name != "." {
			msg := fmt.Sprintf("Batch too large: more than %d commands.", c.s.opts.MaxBatch)
			c.s.refused(RefuseBatchTooLarge, c.l.spec, c.peer, msg)
			c.send(Reply{Status: -1, Message: msg})
			return false
		}
	}
	spec := lookupCommand(cmd.Name)
	// A BATCH's UPDATE waits in the run of its file's (batchupdate.go);
	// any other command runs after the run.
	queue := c.inBatch && spec != nil && spec.name == "UPDATE" && c.l.perms.allows(spec.name) && spec.where&inBatch != 0
	if !queue && !c.runUpdates() {
		return false
	}
	// BATCH's go-ahead is sent at once, "."'s answer too; inside a BATCH
	// only errors are kept.
	collect := c.inBatch && !(spec != nil && spec.name == "." && c.l.perms.allows("."))
	name := "unknown"
	var rep Reply
	keep := true
	switch {
	case spec == nil:
		rep = errorf("Unknown command: %s", cmd.Name)
	case !c.l.perms.allows(spec.name):
		name = spec.name
		c.s.refused(RefusePermission, c.l.spec, c.peer, "command "+spec.name)
		rep = errorf("Permission denied.")
	case c.inBatch && spec.where&inBatch == 0, !c.inBatch && spec.where&inClient == 0:
		name = spec.name
		rep = errorf("Can't use '%s' here.", cmd.Name)
	case queue:
		return c.queueUpdate(spec, cmd.Args)
	default:
		name = spec.name
		rep, keep = c.run(spec, cmd.Args)
	}
	c.s.m.command(name, rep.OK())
	if !keep {
		return false
	}
	return c.answer(rep, collect)
}

// answer sends a command's reply, or inside a BATCH (collect) keeps its
// error for the batch's answer; false ends the connection (the errors
// kept would go over MaxBatchErrorBytes).
func (c *conn) answer(rep Reply, collect bool) bool {
	if !collect {
		return c.send(rep)
	}
	return c.collect(rep, c.batchN)
}

// collect keeps the error of the BATCH's command n for the batch's answer.
func (c *conn) collect(rep Reply, n int) bool {
	if rep.OK() {
		return true
	}
	msg := rep.Message
	if len(msg) > maxBatchErrorLen {
		msg = msg[:maxBatchErrorLen]
	}
	line := strconv.Itoa(n) + " " + msg
	if c.errBytes+len(line)+1 > c.s.opts.MaxBatchErrorBytes {
		c.resetBatch() // the lines kept are not sent: free them now
		msg := fmt.Sprintf("Batch too large: its error lines take more than %d bytes.", c.s.opts.MaxBatchErrorBytes)
		c.s.refused(RefuseBatchErrors, c.l.spec, c.peer, msg)
		c.send(Reply{Status: -1, Message: msg})
		return false
	}
	c.batchErrs = append(c.batchErrs, line)
	c.errBytes += len(line) + 1
	return true
}

// startBatch and endBatch are BATCH and ".".
func (c *conn) startBatch() Reply {
	c.resetBatch()
	c.inBatch = true
	return Reply{Message: "Go ahead.  End with dot '.' on its own line."}
}

func (c *conn) endBatch() Reply {
	c.s.m.batchSize.Observe(float64(c.batchN - 1))
	rep := Reply{Status: len(c.batchErrs), Message: "errors", Lines: c.batchErrs}
	c.resetBatch()
	return rep
}

func (c *conn) resetBatch() {
	c.inBatch, c.batchN, c.batchErrs, c.errBytes = false, 0, nil, 0
}

// send writes a reply into the connection's buffer, within WriteTimeout,
// and the rest of it that c.stream writes.
func (c *conn) send(rep Reply) bool {
	stream := c.stream
	c.stream = nil
	c.nc.SetWriteDeadline(time.Now().Add(c.s.opts.WriteTimeout))
	_, err := c.w.Write(rep.Append(nil))
	if stream != nil {
		w := &replyWriter{c: c, err: err}
		stream(w) // always called: it releases what the command holds
		err = w.err
	}
	if err != nil {
		return c.writeFailed(err)
	}
	return true
}

// replyWriter writes a streamed reply into the connection's buffer, each
// WriteTimeout counted from the last progress; after an error it writes
// nothing and keeps the error.
type replyWriter struct {
	c   *conn
	n   int // bytes since the deadline was set
	err error
}

func (w *replyWriter) write(b []byte) {
	if w.err != nil {
		return
	}
	if w.n += len(b); w.n > 1<<16 {
		w.c.nc.SetWriteDeadline(time.Now().Add(w.c.s.opts.WriteTimeout))
		w.n = 0
	}
	_, w.err = w.c.w.Write(b)
}

// line writes b and a line end.
func (w *replyWriter) line(b []byte) {
	w.write(b)
	if w.err == nil {
		w.err = w.c.w.WriteByte('\n')
	}
}

// flush sends what is buffered, within WriteTimeout.
func (c *conn) flush() bool {
	if c.w.Buffered() == 0 {
		return true
	}
	c.nc.SetWriteDeadline(time.Now().Add(c.s.opts.WriteTimeout))
	if err := c.w.Flush(); err != nil {
		return c.writeFailed(err)
	}
	return true
}

func (c *conn) writeFailed(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.s.refused(RefuseWriteTimeout, c.l.spec, c.peer, fmt.Sprintf("a reply not read within %s", c.s.opts.WriteTimeout))
	}
	c.w.Reset(io.Discard)
	return false
}

// errorf is an error reply.
func errorf(format string, args ...any) Reply {
	return Reply{Status: -1, Message: fmt.Sprintf(format, args...)}
}

// clip shortens client bytes for a log line.
func clip(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// peerCred is "pid=P uid=U" of a unix socket's peer, or "".
func peerCred(uc *net.UnixConn) string {
	raw, err := uc.SyscallConn()
	if err != nil {
		return ""
	}
	var cred *unix.Ucred
	raw.Control(func(fd uintptr) {
		cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	if err != nil || cred == nil {
		return ""
	}
	return fmt.Sprintf("pid=%d uid=%d", cred.Pid, cred.Uid)
}
