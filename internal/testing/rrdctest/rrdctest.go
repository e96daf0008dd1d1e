// Package rrdctest compares servers of rrdcached's protocol: it runs a
// script of sessions against a server, records every reply, and compares
// two transcripts with the differences that do not matter (the RRD
// directory's path, STATS values, LIST's order) taken out. It also starts
// Debian's rrdcached for a test. rrdcached's own conformance test and the
// e2e tests of cmd/spoold share it, and the tests of the rrdcached client
// and of forwarding kill and restart it (server.go). Each rrdcached process
// has one goroutine waiting for it, until it is stopped or the test's
// cleanup; nothing else starts goroutines.
package rrdctest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spoold/spoold/rrdcached"
)

// A Session is the lines one connection sends, in order.
type Session []string

// An Exchange is one line sent and what came back: the reply, none (a
// line inside a BATCH, QUIT), or the connection's end.
type Exchange struct {
	Sent    string
	Reply   *rrdcached.Reply
	Closed  bool   // the server closed the connection instead of replying
	ReadErr string // a read error other than the connection's end
}

// Run sends each session on its own connection to network/addr and
// records the exchanges, one slice per session. It reads each reply
// within timeout. The runner knows rrdcached's framing: no reply inside a
// BATCH until ".", none for QUIT.
func Run(network, addr string, script []Session, timeout time.Duration) ([][]Exchange, error) {
	var out [][]Exchange
	for i, s := range script {
		ex, err := runSession(network, addr, s, timeout)
		if err != nil {
			return out, fmt.Errorf("session %d: %w", i+1, err)
		}
		out = append(out, ex)
	}
	return out, nil
}

func runSession(network, addr string, s Session, timeout time.Duration) ([]Exchange, error) {
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, fmt.Errorf("dial %s:%s: %w", network, addr, err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	var out []Exchange
	inBatch := false
	for _, line := range s {
		e := Exchange{Sent: line}
		c.SetDeadline(time.Now().Add(timeout))
		if _, err := c.Write([]byte(line + "\n")); err != nil {
			e.Closed = true
			out = append(out, e)
			return out, nil
		}
		word, _, _ := strings.Cut(line, " ")
		switch {
		case strings.EqualFold(word, "QUIT"):
			out = append(out, e)
			return out, nil
		case inBatch && line != ".":
			out = append(out, e)
			continue
		}
		rep, err := rrdcached.ReadReply(r)
		switch {
		case err == nil:
			e.Reply = &rep
			if strings.EqualFold(word, "BATCH") && rep.Status == 0 && !inBatch {
				inBatch = true
			} else if line == "." && inBatch {
				inBatch = false
			}
		case errors.Is(err, os.ErrDeadlineExceeded):
			e.ReadErr = "no reply within " + timeout.String()
		default:
			e.Closed = true
		}
		out = append(out, e)
		if e.Closed || e.ReadErr != "" {
			return out, nil
		}
	}
	return out, nil
}

// Normalize returns the transcript with what may differ between two
// correct servers made equal: dir (the server's RRD directory as its
// replies print it) becomes "$DIR", STATS values become "N", LIST's and
// QUEUE's lines are sorted, and rrdcached's garbled file name in "field X
// not found in <file>" is cut.
func Normalize(t [][]Exchange, dir string) [][]Exchange {
	out := make([][]Exchange, len(t))
	for i, s := range t {
		for _, e := range s {
			if e.Reply != nil {
				rep := normalizeReply(e.Sent, *e.Reply, dir)
				e.Reply = &rep
			}
			out[i] = append(out[i], e)
		}
	}
	return out
}

func normalizeReply(sent string, rep rrdcached.Reply, dir string) rrdcached.Reply {
	sub := func(s string) string { return strings.ReplaceAll(s, dir, "$DIR") }
	rep.Message = sub(rep.Message)
	if strings.HasPrefix(rep.Message, "field ") && strings.Contains(rep.Message, " not found in ") {
		rep.Message = rep.Message[:strings.Index(rep.Message, " not found in ")+len(" not found in ")]
	}
	lines := make([]string, len(rep.Lines))
	for i, l := range rep.Lines {
		lines[i] = sub(l)
	}
	word, _, _ := strings.Cut(strings.ToUpper(sent), " ")
	switch word {
	case "STATS":
		for i, l := range lines {
			name, _, _ := strings.Cut(l, ":")
			lines[i] = name + ": N"
		}
	case "LIST", "QUEUE":
		sort.Strings(lines)
	}
	rep.Lines = lines
	return rep
}

// Diff compares two normalized transcripts and describes each exchange
// that differs ("" when none does).
func Diff(nameA string, a [][]Exchange, nameB string, b [][]Exchange) string {
	var d strings.Builder
	if len(a) != len(b) {
		fmt.Fprintf(&d, "%d sessions from %s, %d from %s\n", len(a), nameA, len(b), nameB)
	}
	for i := 0; i < min(len(a), len(b)); i++ {
		for j := 0; j < max(len(a[i]), len(b[i])); j++ {
			var ea, eb Exchange
			if j < len(a[i]) {
				ea = a[i][j]
			}
			if j < len(b[i]) {
				eb = b[i][j]
			}
			if sa, sb := show(ea), show(eb); sa != sb {
				sent := ea.Sent
				if sent == "" {
					sent = eb.Sent
				}
				fmt.Fprintf(&d, "session %d, line %d %q:\n  %s: %s\n  %s: %s\n", i+1, j+1, sent, nameA, sa, nameB, sb)
			}
		}
	}
	return d.String()
}

// Outcome says what the server did instead of replying to the exchange's
// line ("(connection closed)", "(<read error>)", "(no reply)"); "" when it
// replied.
func (e Exchange) Outcome() string {
	switch {
	case e.Closed:
		return "(connection closed)"
	case e.ReadErr != "":
		return "(" + e.ReadErr + ")"
	case e.Reply == nil:
		return "(no reply)"
	}
	return ""
}

// show renders an exchange for Diff.
func show(e Exchange) string {
	if e.Sent == "" && e.Reply == nil && !e.Closed && e.ReadErr == "" {
		return "(nothing)"
	}
	if o := e.Outcome(); o != "" {
		return o
	}
	return fmt.Sprintf("%q", e.Reply.String())
}
