package rrdcached

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
)

// A Reply is one answer of rrdcached's protocol: the status line
// "<Status> <Message>" and, when Status is positive, that many lines
// after it (a command's data, or BATCH's per-command errors). A negative
// Status is an error; rrdcached always sends -1.
type Reply struct {
	Status  int
	Message string
	Lines   []string
}

// OK reports whether the reply is not an error.
func (r Reply) OK() bool { return r.Status >= 0 }

// Err returns nil for a reply that is not an error, and the message as an
// error otherwise.
func (r Reply) Err() error {
	if r.OK() {
		return nil
	}
	return &ReplyError{Msg: r.Message}
}

// String is the reply as it is sent, every line ended by "\n".
func (r Reply) String() string {
	return string(r.Append(nil))
}

// Append appends the reply as it is sent to b.
func (r Reply) Append(b []byte) []byte {
	b = strconv.AppendInt(b, int64(r.Status), 10)
	b = append(b, ' ')
	b = append(b, r.Message...)
	b = append(b, '\n')
	for _, l := range r.Lines {
		b = append(b, l...)
		b = append(b, '\n')
	}
	return b
}

// ReadReply reads one reply: the status line and, for a positive status,
// that many lines. Line ends ("\n", "\r\n") are not kept. It does not read
// FETCHBIN's binary lines.
func ReadReply(r *bufio.Reader) (Reply, error) {
	status, err := readLine(r)
	if err != nil {
		return Reply{}, fmt.Errorf("read rrdcached status line: %w", err)
	}
	num, msg, ok := strings.Cut(status, " ")
	n, err := strconv.Atoi(num)
	if !ok || err != nil {
		return Reply{}, fmt.Errorf("read rrdcached status line %q: not \"<number> <message>\"", status)
	}
	rep := Reply{Status: n, Message: msg}
	for i := 0; i < n; i++ {
		l, err := readLine(r)
		if err != nil {
			return rep, fmt.Errorf("read rrdcached reply line %d of %d after %q: %w", i+1, n, status, err)
		}
		rep.Lines = append(rep.Lines, l)
	}
	return rep, nil
}

func readLine(r *bufio.Reader) (string, error) {
	l, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	l = strings.TrimSuffix(l[:len(l)-1], "\r")
	return l, nil
}
