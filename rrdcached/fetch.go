package rrdcached

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// fetchParsed is FETCH's and FETCHBIN's request, answered: the result and
// the columns asked for (indexes into its DS).
type fetchParsed struct {
	res  FetchResult
	cols []int
	abs  string
}

// fetch is FETCH and FETCHBIN: it waits for one of the server's
// MaxFetches slots, fetches, and sends the reply as write formats it,
// releasing the slot when the reply is sent.
func (c *conn) fetch(spec *commandSpec, args []string, write func(*fetchParsed, *replyWriter)) Reply {
	if !c.s.fetchSlot() {
		return errorf("rrd_fetch_r failed: the server is closing")
	}
	p, rep, good := c.parseFetch(spec, args)
	if !good {
		<-c.s.fetches
		return rep
	}
	c.stream = func(w *replyWriter) {
		defer func() { <-c.s.fetches }()
		write(&p, w)
	}
	return Reply{Status: p.lines(spec.name), Message: "Success"}
}

// fetchSlot takes one of the MaxFetches slots, waiting for one (counted
// in spoold_rrdcached_fetches_waiting); false when the server closes
// meanwhile.
func (s *Server) fetchSlot() bool {
	select {
	case s.fetches <- struct{}{}:
		return true
	default:
	}
	s.m.fetchesWaiting.Inc()
	defer s.m.fetchesWaiting.Dec()
	select {
	case s.fetches <- struct{}{}:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// parseFetch reads "<file> <CF> [<start> [<end>] [<column>...]]" and
// fetches, with rrdcached's errors in its order.
func (c *conn) parseFetch(spec *commandSpec, args []string) (fetchParsed, Reply, bool) {
	var p fetchParsed
	if len(args) < 2 {
		return p, syntaxError(spec), false
	}
	rel, abs, rep, good := c.file(spec, args)
	if !good {
		return p, rep, false
	}
	p.abs = abs
	now := c.s.opts.Now().Unix()
	start, end := now-86400, now
	var cols []string
	if len(args) > 2 {
		v, ok := cStrtol(args[2])
		if !ok {
			return p, errorf("Cannot parse start time `%s': Only simple integers are allowed.", args[2]), false
		}
		start = relativeTime(v, now)
	}
	if len(args) > 3 {
		v, ok := cStrtol(args[3])
		if !ok {
			return p, errorf("Cannot parse end time `%s': Only simple integers are allowed.", args[3]), false
		}
		end = relativeTime(v, now)
		cols = args[4:]
	}
	res, err := c.s.backend.Fetch(c.s.ctx, rel, FetchArgs{CF: args[1], Start: time.Unix(start, 0), End: time.Unix(end, 0), MaxBytes: c.s.opts.MaxFetchBytes})
	var big *FetchTooLargeError
	switch {
	case errors.As(err, &big):
		msg := fmt.Sprintf("FETCH too large: %s over this range, more than the %s one FETCH may read; ask for a shorter range",
			big, byteSize(c.s.opts.MaxFetchBytes))
		c.s.refused(RefuseFetchTooLarge, c.l.spec, c.peer, abs+": "+msg)
		return p, errorf("%s", msg), false
	case err != nil:
		return p, errorf("%s", message(err, abs, "rrd_fetch_r failed: ")), false
	}
	if res.Step < time.Second {
		return p, errorf("rrd_fetch_r failed: step %s is under a second", res.Step), false
	}
	p.res = res
	for _, name := range cols {
		if len(p.cols) >= len(res.DS) {
			return p, errorf("too many fields given - duplicates!"), false
		}
		if name == "" {
			continue
		}
		found := -1
		for i, ds := range res.DS {
			if ds == name {
				found = i
				break
			}
		}
		if found < 0 {
			return p, errorf("field %s not found in %s", name, abs), false
		}
		for _, c := range p.cols {
			if c == found {
				return p, errorf("field %s already used", name), false
			}
		}
		p.cols = append(p.cols, found)
	}
	if len(p.cols) == 0 {
		for i := range res.DS {
			p.cols = append(p.cols, i)
		}
	}
	return p, Reply{}, true
}

// relativeTime is rrdcached's reading of a FETCH time: positive is
// absolute, zero or negative is relative to now.
func relativeTime(v, now int64) int64 {
	if v > 0 {
		return v
	}
	return now + v
}

// value returns row j's value of column i (NaN past the backend's rows).
func (p *fetchParsed) value(j, i int) float64 {
	if j < len(p.res.Rows) && i < len(p.res.Rows[j]) {
		return p.res.Rows[j][i]
	}
	return math.Copysign(math.NaN(), -1)
}

func (p *fetchParsed) header() []string {
	return []string{
		"FlushVersion: 1",
		"Start: " + strconv.FormatInt(p.res.Start.Unix(), 10),
		"End: " + strconv.FormatInt(p.res.End.Unix(), 10),
		"Step: " + strconv.FormatInt(int64(p.res.Step/time.Second), 10),
		"DSCount: " + strconv.Itoa(len(p.cols)),
	}
}

// rows is the number of rows rrdcached prints: Start+Step ... End.
func (p *fetchParsed) rows() int {
	step := int64(p.res.Step / time.Second)
	return int(max(0, (p.res.End.Unix()-p.res.Start.Unix())/step))
}

// lines is the status of the reply: the lines after the status line
// (FETCHBIN's binary data not counted, as rrdcached counts).
func (p *fetchParsed) lines(command string) int {
	if command == "FETCHBIN" {
		return len(p.cols) + 5
	}
	return 6 + p.rows()
}

func (c *conn) doFetch(spec *commandSpec, args []string) Reply {
	return c.fetch(spec, args, writeFetch)
}

// writeFetch writes FETCH's lines: the header, the names, and a row a
// line ("<time>: <value> ...").
func writeFetch(p *fetchParsed, w *replyWriter) {
	for _, l := range p.header() {
		w.line([]byte(l))
	}
	names := make([]string, len(p.cols))
	for i, c := range p.cols {
		names[i] = p.res.DS[c]
	}
	w.line([]byte("DSName: " + strings.Join(names, " ")))
	step := int64(p.res.Step / time.Second)
	t := p.res.Start.Unix()
	b := make([]byte, 0, 11+25*len(p.cols))
	for j := 0; j < p.rows(); j++ {
		t += step
		b = append(b[:0], padLeft(strconv.FormatInt(t, 10), 10)...)
		b = append(b, ':')
		for _, c := range p.cols {
			b = append(b, ' ')
			b = appendCFloat(b, p.value(j, c))
		}
		w.line(b)
	}
}

// doFetchBin is FETCHBIN: per column a "DSName-<name>: BinaryData <n> 8
// LITTLE" line and then n doubles in the machine's order (little endian
// here) and "\n"; the status counts the text lines only, as rrdcached's.
func (c *conn) doFetchBin(spec *commandSpec, args []string) Reply {
	return c.fetch(spec, args, writeFetchBin)
}

func writeFetchBin(p *fetchParsed, w *replyWriter) {
	for _, l := range p.header() {
		w.line([]byte(l))
	}
	n := p.rows()
	var b [8]byte
	for _, c := range p.cols {
		w.line([]byte("DSName-" + p.res.DS[c] + ": BinaryData " + strconv.Itoa(n) + " 8 LITTLE"))
		for j := 0; j < n; j++ {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(p.value(j, c)))
			w.write(b[:])
		}
		w.line(nil)
	}
}

func padLeft(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat(" ", n-len(s)) + s
}

// appendCFloat appends v as C's "%0.17e" prints it (glibc: "nan", "-nan",
// "inf", "-inf").
func appendCFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v) && math.Signbit(v):
		return append(b, "-nan"...)
	case math.IsNaN(v):
		return append(b, "nan"...)
	case math.IsInf(v, 1):
		return append(b, "inf"...)
	case math.IsInf(v, -1):
		return append(b, "-inf"...)
	}
	return strconv.AppendFloat(b, v, 'e', 17, 64)
}

// cStrtol is strtol(s, &end, 0) as rrdcached checks it: leading white
// space, a sign, a 0x or 0 prefix; trailing bytes are ignored; no digits
// or an overflow fail.
func cStrtol(s string) (int64, bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	base := 10
	switch {
	case i+1 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && i+2 < len(s) && digitVal(s[i+2]) < 16:
		base, i = 16, i+2
	case i < len(s) && s[i] == '0':
		base = 8
	}
	j := i
	for j < len(s) && digitVal(s[j]) < base {
		j++
	}
	if j == i {
		return 0, false
	}
	v, err := strconv.ParseInt(s[i:j], base, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

func digitVal(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'z':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'Z':
		return int(c-'A') + 10
	}
	return 99
}

// cAtol is C's atol: strtol in base 10, 0 where it finds no number.
func cAtol(s string) int64 {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	j := i
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	for j < len(s) && '0' <= s[j] && s[j] <= '9' {
		j++
	}
	v, err := strconv.ParseInt(s[i:j], 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// cAtoi is C's atoi (an int; out of range wraps as glibc's does not
// promise, so it is clamped here).
func cAtoi(s string) int {
	v := cAtol(s)
	return int(max(math.MinInt32, min(math.MaxInt32, v)))
}
