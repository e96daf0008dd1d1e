package spoolbackend

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spoold/spoold/internal/numtext"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdcached"
	"github.com/spoold/spoold/spool"
)

// The values of an rrdcached UPDATE, "time:v1:v2:...", turned into a spool
// entry typed by the file's data sources, so that the writer hands librrd
// what the client sent.
//
// Times: "N" (now, to the millisecond) or Unix seconds with an optional
// fraction ("1700000000", "1700000000.25"), kept to the millisecond
// (Entry.Milli); librrd keeps microseconds, spoold cuts the rest. rrdcached
// accepts only a number there (strtod) and refuses "N" (rrdtool's client
// replaces it); spoold takes "N" too. At-style times ("-5min@v") and
// negative (relative) times are refused, as rrdcached refuses them.
//
// Values, by the data source's type as rrdupdate checks them: "U" is
// unknown for every type; COUNTER takes an unsigned integer (spooled as a
// spool.Counter, every bit of a 64-bit counter kept); DERIVE a signed one
// (a non-negative one as a Counter, a negative one as a Gauge, exact down
// to -2^53, below that refused); ABSOLUTE an unsigned integer (a Counter)
// or a number (a Gauge), GAUGE and the other types a number (a Gauge; NaN
// is unknown, ±Inf refused); COMPUTE data sources take no value (spooled
// unknown whatever the client sent, as librrd ignores it).

// UpdateError is a refused update: the reason (a label of the refusal
// counter, see Refusal) and the error for the client, an
// rrdcached.ReplyError in rrdcached's words where they are known, or
// wrapping rrdcached.ErrNoSuchFile.
type UpdateError struct {
	Reason Refusal
	Err    error
}

func (e *UpdateError) Error() string { return e.Err.Error() }
func (e *UpdateError) Unwrap() error { return e.Err }

// Refusal says why an update was refused; it labels
// spoold_rrdcached_updates_refused_total.
type Refusal string

// The reasons an update is refused.
const (
	RefusedSyntax  Refusal = "syntax"  // no time, a bad time or a bad value
	RefusedCount   Refusal = "count"   // not one value per data source
	RefusedTime    Refusal = "time"    // not after the file's last update
	RefusedFuture  Refusal = "future"  // further ahead than FutureTolerance
	RefusedMissing Refusal = "missing" // no such RRD file
	RefusedFile    Refusal = "file"    // not a regular RRD file, or unreadable
	RefusedClaimed Refusal = "claimed" // the file of a poller target
	RefusedSpool   Refusal = "spool"   // the spool could not take it
)

// refuse returns a refusal whose message is sent as is.
func refuse(r Refusal, format string, args ...any) error {
	return &UpdateError{Reason: r, Err: &rrdcached.ReplyError{Msg: fmt.Sprintf(format, args...)}}
}

// refusalOf returns the reason of a refused update's error.
func refusalOf(err error) Refusal {
	var ue *UpdateError
	if errors.As(err, &ue) {
		return ue.Reason
	}
	return RefusedSpool
}

// parseUpdate parses one update of the file with data sources ds into
// entry e (its key set by the caller). now is the time of "N".
func parseUpdate(s string, ds []rrd.DSInfo, now time.Time) (spool.Entry, error) {
	return parseUpdateInto(s, ds, now, nil)
}

// parseUpdateInto is parseUpdate putting the values into vals (reused
// when it has room: the entry's Values are valid until vals is reused).
func parseUpdateInto(s string, ds []rrd.DSInfo, now time.Time, vals []spool.Value) (spool.Entry, error) {
	ts, rest, ok := strings.Cut(s, ":")
	if !ok || strings.IndexByte(ts, '@') >= 0 {
		return spool.Entry{}, &UpdateError{Reason: RefusedSyntax, Err: rrdcached.BadTimestamp(s)}
	}
	sec, milli, err := parseUpdateTime(ts, now)
	if err != nil {
		return spool.Entry{}, &UpdateError{Reason: RefusedSyntax, Err: rrdcached.BadTimestamp(s)}
	}
	n := strings.Count(rest, ":") + 1
	if n != len(ds) {
		return spool.Entry{}, refuse(RefusedCount, "expected %d data source readings (got %d) from %s", len(ds), n, s)
	}
	if cap(vals) < len(ds) {
		vals = make([]spool.Value, len(ds))
	}
	e := spool.Entry{Time: sec, Milli: milli, Values: vals[:len(ds)]}
	for i := range ds {
		var v string
		v, rest, _ = strings.Cut(rest, ":")
		val, err := parseUpdateValue(v, ds[i].Type)
		if err != nil {
			return spool.Entry{}, refuse(RefusedSyntax, "%s: data source %s: %v", s, ds[i].Name, err)
		}
		val.Name = ds[i].Name
		e.Values[i] = val
	}
	return e, nil
}

// parseUpdateTime parses "N" or "<seconds>[.<fraction>]".
func parseUpdateTime(s string, now time.Time) (sec int64, milli uint16, err error) {
	if s == "N" {
		return now.Unix(), uint16(now.Nanosecond() / 1e6), nil
	}
	whole, frac, _ := strings.Cut(s, ".")
	if !allDigits(whole) || frac != "" && !allDigits(frac) {
		return 0, 0, errors.New("want N or Unix seconds")
	}
	sec, err = strconv.ParseInt(whole, 10, 64)
	if err != nil || sec <= 0 {
		return 0, 0, fmt.Errorf("time %s out of range", s)
	}
	for i := 0; i < 3; i++ {
		milli *= 10
		if i < len(frac) {
			milli += uint16(frac[i] - '0')
		}
	}
	return sec, milli, nil
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// parseUpdateValue parses one value for a data source of type t.
func parseUpdateValue(v string, t rrd.DSType) (spool.Value, error) {
	if v == "U" || t == "COMPUTE" {
		return spool.Value{Type: spool.Unknown}, nil
	}
	switch t {
	case rrd.Counter:
		return parseUnsigned(v, "unsigned")
	case rrd.Derive:
		if neg, ok := strings.CutPrefix(v, "-"); ok && allDigits(neg) {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < -numtext.MaxExactInt {
				return spool.Value{}, fmt.Errorf("%q is below -2^53, which spoold cannot keep exactly", v)
			}
			return spool.Value{Type: spool.Gauge, Gauge: float64(n)}, nil
		}
		return parseUnsigned(v, "signed")
	case rrd.Absolute:
		if allDigits(v) {
			return parseUnsigned(v, "unsigned")
		}
	}
	if n, ok := rrd.SmallInteger(v); ok && len(v) <= 15 {
		return spool.Value{Type: spool.Gauge, Gauge: float64(n)}, nil // below 2^53: what ParseFloat gives
	}
	f, err := strconv.ParseFloat(v, 64)
	switch {
	case err != nil || strings.IndexByte(v, '_') >= 0:
		return spool.Value{}, fmt.Errorf("%q is not a number", v)
	case math.IsNaN(f):
		return spool.Value{Type: spool.Unknown}, nil
	case math.IsInf(f, 0):
		return spool.Value{}, fmt.Errorf("%q is infinite", v)
	}
	return spool.Value{Type: spool.Gauge, Gauge: f}, nil
}

// parseUnsigned parses a COUNTER's (or a non-negative DERIVE's) value.
func parseUnsigned(v, kind string) (spool.Value, error) {
	if n, ok := rrd.SmallInteger(v); ok {
		return spool.Value{Type: spool.Counter, Counter: uint64(n)}, nil
	}
	if !allDigits(v) {
		return spool.Value{}, fmt.Errorf("not a simple %s integer: '%s'", kind, v)
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return spool.Value{}, fmt.Errorf("%q does not fit 64 bits", v)
	}
	return spool.Value{Type: spool.Counter, Counter: n}, nil
}

// formatUpdate formats an entry as an rrdcached UPDATE value (PENDING):
// "<seconds>[.<ms>]:v1:v2...", the values in the entry's order.
func formatUpdate(e *spool.Entry) string {
	b := strconv.AppendInt(nil, e.Time, 10)
	if e.Milli > 0 {
		b = fmt.Appendf(b, ".%03d", e.Milli)
	}
	for _, v := range e.Values {
		b = append(b, ':')
		b = v.AppendText(b)
	}
	return string(b)
}
