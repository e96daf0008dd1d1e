package admin

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/loader"
	"github.com/spoold/spoold/rrd"
)

// FuzzParseGraphQuery: a /graph query from the network either gives a
// GraphQueryError (a 400 naming the parameter) or options within every
// bound: start before end, at most MaxGraphSpan, sizes in range, valid data
// source names only (they reach librrd's DEF: strings).
func FuzzParseGraphQuery(f *testing.F) {
	for _, s := range []string{
		"", "ds=in1,out1&start=-6h&end=now&width=800&height=200", "start=-2d", "start=1700000000&end=1700086400",
		"ds=../../etc/passwd", "ds=a%00b", "start=-1h30m&width=0", "end=-1w&start=-20w", "x=1", "ds=a&ds=b&width=1&width=2",
	} {
		f.Add(s)
	}
	now := time.Unix(1_800_000_000, 0)
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		o, err := ParseGraphQuery(q, now)
		if err != nil {
			var ge *GraphQueryError
			if !errors.As(err, &ge) {
				t.Fatalf("error %v is not a GraphQueryError", err)
			}
			return
		}
		if !o.Start.Before(o.End) || o.End.Sub(o.Start) > MaxGraphSpan ||
			o.Width < MinGraphWidth || o.Width > MaxGraphWidth || o.Height < MinGraphHeight || o.Height > MaxGraphHeight || len(o.DS) > MaxGraphDS {
			t.Fatalf("ParseGraphQuery(%q) = %+v", raw, o)
		}
		for _, ds := range o.DS {
			if !rrd.ValidDSName(ds) {
				t.Fatalf("ParseGraphQuery(%q) passed data source %q", raw, ds)
			}
		}
	})
}

// FuzzLoaderFields: POST /loader reads a form and a JSON object alike. The
// fields of an accepted body, sent in the other encoding, are accepted
// and set the same parameters; accepted parameters are valid, and the
// reply never prints a sign on zero ("-0%").
func FuzzLoaderFields(f *testing.F) {
	for _, s := range []string{"loader_files=5", "loader_cpu=-0", "loader_cpu=25%25&loader_sleep=1s", "loader_files=1&loader_files=2"} {
		f.Add(false, s)
	}
	for _, s := range []string{`{"loader_files": 5}`, `{"loader_cpu": -0}`, `{"loader_cpu": "1%", "loader_cpu": "2%"}`, `{"loader_threshold": "1s"}`} {
		f.Add(true, s)
	}
	f.Fuzz(func(t *testing.T, asJSON bool, body string) {
		p, fields, err := parseLoaderBody(asJSON, body)
		if err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("%q accepted with invalid parameters: %v", body, err)
		}
		if r := replyOf(p); strings.HasPrefix(r.CPU, "-") {
			t.Fatalf("%q: reply loader_cpu %q", body, r.CPU)
		}
		var other string
		if asJSON {
			vs := url.Values{}
			for k, v := range fields {
				vs.Set(k, v)
			}
			other = vs.Encode()
		} else {
			b, _ := json.Marshal(fields)
			other = string(b)
		}
		q, _, err := parseLoaderBody(!asJSON, other)
		if err != nil || q != p {
			t.Fatalf("%q gave %+v; the same fields as %q gave %+v, %v", body, p, other, q, err)
		}
	})
}

// parseLoaderBody parses a POST /loader body as the handler does and
// applies it to the default parameters.
func parseLoaderBody(asJSON bool, body string) (loader.Params, map[string]string, error) {
	var fields map[string]string
	var err error
	if asJSON {
		fields, err = jsonFields([]byte(body))
	} else {
		fields, err = formFields(body)
	}
	if err != nil {
		return loader.Params{}, nil, err
	}
	p, err := applyLoaderFields(loader.DefaultParams(), fields)
	return p, fields, err
}
