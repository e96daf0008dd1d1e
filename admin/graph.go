package admin

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spoold/spoold/graph"
	"github.com/spoold/spoold/rrd"
)

// Graph size bounds, in pixels of the drawing area (rrdtool graph --width,
// --height), and the defaults used when a size is not given.
const (
	MinGraphWidth, MaxGraphWidth   = 100, 2000
	MinGraphHeight, MaxGraphHeight = 50, 1000
	DefaultGraphWidth              = 600
	DefaultGraphHeight             = 200
	// MaxGraphDS is the most data sources a graph request's URL may name;
	// Options.GraphMaxDS, at most this, is the most one graph draws.
	MaxGraphDS = 256
	// MaxGraphSpan is the longest time range of one graph.
	MaxGraphSpan = 20 * 366 * 24 * time.Hour
)

// GraphRange is a named time range of a graph's "range" parameter: the
// graph starts Span before its end.
type GraphRange struct {
	Name string
	Span time.Duration
}

// GraphRanges are the names "range" accepts, shortest first: day (1 day),
// week (7 days), month (31 days) and year (366 days), so that a month or a
// year always shows the whole of the last calendar one.
var GraphRanges = []GraphRange{
	{"day", 24 * time.Hour}, {"week", 7 * 24 * time.Hour},
	{"month", 31 * 24 * time.Hour}, {"year", 366 * 24 * time.Hour},
}

func graphRangeSpan(name string) (time.Duration, bool) {
	for _, r := range GraphRanges {
		if r.Name == name {
			return r.Span, true
		}
	}
	return 0, false
}

// ValidTargetName reports whether name may be a target name in a URL: 1 to
// 255 bytes of valid UTF-8 without control characters, '/' or '\\', and not
// starting with '.'. It checks syntax only (the Daemon decides what is
// configured), and is wider than the targets file's grammar so that the page
// works for whatever names the daemon has; RRD file paths are built by
// rrd.RRDPath, never from the URL.
func ValidTargetName(name string) bool {
	if name == "" || len(name) > 255 || name[0] == '.' || !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if r == '/' || r == '\\' || unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// ValidGraphKey reports whether key may name a graph in a URL: a target
// name ValidTargetName accepts, or a row key "<target>/<segment>" or
// "<target>/<subdir>/<segment>" (a table with a subdirectory, as the host
// profile's storage) whose every part it accepts. Like ValidTargetName it
// checks syntax only.
func ValidGraphKey(key string) bool {
	parts := strings.Split(key, "/")
	if len(parts) > 3 {
		return false
	}
	for _, p := range parts {
		if !ValidTargetName(p) {
			return false
		}
	}
	return true
}

// GraphQueryError is a bad graph request parameter; the handler answers 400
// with its message.
type GraphQueryError struct {
	Param string // "ds", "range", "start", "end", "width", "height", "template", "key", or the unknown name
	Value string
	Why   string
}

func (e *GraphQueryError) Error() string {
	return fmt.Sprintf("bad graph parameter %s=%q: %s", e.Param, e.Value, e.Why)
}

// ParseGraphQuery turns the query of a /graph request into graph.Options with
// explicit Start, End, Width and Height; now is the reference of relative
// times. See the package doc for the accepted forms; any other parameter is
// an error. It checks the syntax of "template" (a template name, with which
// "ds" may not be given) and "key" (ValidGraphKey) and leaves them to the
// caller.
func ParseGraphQuery(q url.Values, now time.Time) (graph.Options, error) {
	o := graph.Options{Width: DefaultGraphWidth, Height: DefaultGraphHeight}
	for k, vs := range q {
		switch k {
		case "ds", "range", "start", "end", "width", "height", "template", "key":
			if k != "ds" && len(vs) > 1 {
				return o, &GraphQueryError{k, strings.Join(vs, ","), "given more than once"}
			}
		default:
			return o, &GraphQueryError{k, strings.Join(vs, ","), "unknown parameter (want key, template, ds, range, start, end, width, height)"}
		}
	}
	if v, ok := q["template"]; ok && !graph.ValidTemplateName(v[0]) {
		return o, &GraphQueryError{"template", v[0], "a template name is 1 to 32 of a-z 0-9 _ -, starting with a letter"}
	}
	if _, ok := q["template"]; ok && q.Has("ds") {
		return o, &GraphQueryError{"ds", strings.Join(q["ds"], ","), "a template names its data sources; give ds or template"}
	}
	if v, ok := q["key"]; ok && !ValidGraphKey(v[0]) {
		return o, &GraphQueryError{"key", v[0], "want a target name or a row key <target>/[<subdir>/]<instance>"}
	}
	var err error
	if o.DS, err = parseDS(q["ds"]); err != nil {
		return o, err
	}
	if o.Width, err = parseSize(q, "width", DefaultGraphWidth, MinGraphWidth, MaxGraphWidth); err != nil {
		return o, err
	}
	if o.Height, err = parseSize(q, "height", DefaultGraphHeight, MinGraphHeight, MaxGraphHeight); err != nil {
		return o, err
	}
	o.Start, o.End, err = parseGraphSpan(q, now)
	return o, err
}

// parseGraphSpan returns the time range of q's "range", "start" and "end":
// end defaults to now, start to a day (or the range's span) before end.
func parseGraphSpan(q url.Values, now time.Time) (start, end time.Time, err error) {
	span := 24 * time.Hour
	if v := q.Get("range"); q.Has("range") {
		var known bool
		if span, known = graphRangeSpan(v); !known {
			return start, end, &GraphQueryError{"range", v, "want day, week, month or year"}
		}
		if q.Get("start") != "" {
			return start, end, &GraphQueryError{"range", v, "give range or start, not both"}
		}
	}
	end = now
	if v := q.Get("end"); v != "" {
		if end, err = parseGraphTime(v, now); err != nil {
			return start, end, &GraphQueryError{"end", v, err.Error()}
		}
	}
	start = end.Add(-span)
	if v := q.Get("start"); v != "" {
		if start, err = parseGraphTime(v, now); err != nil {
			return start, end, &GraphQueryError{"start", v, err.Error()}
		}
	}
	if !start.Before(end) {
		return start, end, &GraphQueryError{"start", q.Get("start"), "must be before end"}
	}
	if end.Sub(start) > MaxGraphSpan {
		return start, end, &GraphQueryError{"start", q.Get("start"), "range longer than 20 years"}
	}
	return start, end, nil
}

func parseDS(vs []string) ([]string, error) {
	var ds []string
	for _, v := range vs {
		for _, name := range strings.Split(v, ",") {
			if !rrd.ValidDSName(name) {
				return nil, &GraphQueryError{"ds", name, "a data source name is 1 to 19 of A-Z a-z 0-9 _"}
			}
			ds = append(ds, name)
		}
	}
	if len(ds) > MaxGraphDS {
		return nil, &GraphQueryError{"ds", strings.Join(vs, ","), fmt.Sprintf("more than %d data sources", MaxGraphDS)}
	}
	return ds, nil
}

func parseSize(q url.Values, name string, def, lo, hi int) (int, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, &GraphQueryError{name, v, fmt.Sprintf("want an integer from %d to %d", lo, hi)}
	}
	return n, nil
}

// parseGraphTime parses "now", Unix seconds, or a negative offset from now
// ("-6h", "-2d", "-1w", "-1h30m").
func parseGraphTime(v string, now time.Time) (time.Time, error) {
	switch {
	case v == "now":
		return now, nil
	case strings.HasPrefix(v, "-"):
		d, err := parseOffset(v[1:])
		if err != nil {
			return time.Time{}, err
		}
		return now.Add(-d), nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > 1<<40 {
		return time.Time{}, errors.New(`want Unix seconds, "now", or a negative offset such as -6h, -2d, -1w`)
	}
	return time.Unix(n, 0), nil
}

func parseOffset(v string) (time.Duration, error) {
	bad := errors.New(`want an offset such as -90s, -30m, -6h, -2d, -1w or -1h30m`)
	if n := len(v); n >= 2 && (v[n-1] == 'd' || v[n-1] == 'w') {
		k, err := strconv.Atoi(v[:n-1])
		if err != nil || k <= 0 || k > 20*366 {
			return 0, bad
		}
		unit := 24 * time.Hour
		if v[n-1] == 'w' {
			unit *= 7
		}
		return time.Duration(k) * unit, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+") {
		return 0, bad
	}
	return d, nil
}
