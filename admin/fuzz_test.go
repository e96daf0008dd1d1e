package admin

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/spoold/spoold/spool"
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
			if !spool.ValidDSName(ds) {
				t.Fatalf("ParseGraphQuery(%q) passed data source %q", raw, ds)
			}
		}
	})
}
