package spoolbackend

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/spool"
)

// protoDS are the data sources of the update parser's tests: one of each
// type rrdupdate checks differently.
var protoDS = []rrd.DSInfo{{Name: "c", Type: rrd.Counter}, {Name: "d", Type: rrd.Derive}, {Name: "a", Type: rrd.Absolute}, {Name: "g", Type: rrd.Gauge}, {Name: "x", Type: "COMPUTE"}}

func TestParseUpdateTypesEachValueByItsDataSource(t *testing.T) {
	now := time.Unix(1_700_000_000, 250_000_000)
	e, err := parseUpdate("1700000000.5:18446744073709551615:-9007199254740992:2.5:1e-300:7", protoDS, now)
	if err != nil {
		t.Fatal(err)
	}
	want := []spool.Value{
		{Name: "c", Type: spool.Counter, Counter: math.MaxUint64},
		{Name: "d", Type: spool.Gauge, Gauge: -9007199254740992},
		{Name: "a", Type: spool.Gauge, Gauge: 2.5},
		{Name: "g", Type: spool.Gauge, Gauge: 1e-300},
		{Name: "x", Type: spool.Unknown}, // librrd ignores a COMPUTE's value
	}
	if e.Time != 1_700_000_000 || e.Milli != 500 || len(e.Values) != len(want) {
		t.Fatalf("entry %+v", e)
	}
	for i, v := range want {
		if e.Values[i] != v {
			t.Errorf("value %d = %+v, want %+v", i, e.Values[i], v)
		}
	}
	n, err := parseUpdate("N:5:6:7:U:U", protoDS, now)
	if err != nil || n.Time != now.Unix() || n.Milli != 250 {
		t.Errorf("N = %+v, %v; want the clock's time to the millisecond", n, err)
	}
	if n.Values[1] != (spool.Value{Name: "d", Type: spool.Counter, Counter: 6}) || n.Values[2].Type != spool.Counter {
		t.Errorf("a non-negative DERIVE or integral ABSOLUTE is not a counter: %+v", n.Values)
	}
}

func TestParseUpdateRefuses(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		in   string
		want Refusal
	}{
		{"1700000000:1:2:3:4", RefusedCount},
		{"1700000000:1:2:3:4:5:6", RefusedCount},
		{"1700000000", RefusedSyntax},
		{"-5:1:2:3:4:5", RefusedSyntax},
		{"0:1:2:3:4:5", RefusedSyntax},
		{"now-5min@1:2:3:4:5", RefusedSyntax},
		{"1.7e9:1:2:3:4:5", RefusedSyntax},
		{"1700000000:-1:2:3:4:5", RefusedSyntax},                   // COUNTER is unsigned
		{"1700000000:1.5:2:3:4:5", RefusedSyntax},                  // COUNTER is an integer
		{"1700000000:18446744073709551616:2:3:4:5", RefusedSyntax}, // beyond 64 bits
		{"1700000000:1:-9007199254740993:3:4:5", RefusedSyntax},    // below -2^53
		{"1700000000:1:2.5:3:4:5", RefusedSyntax},                  // DERIVE is an integer
		{"1700000000:1:2:x:4:5", RefusedSyntax},
		{"1700000000:1:2:3:inf:5", RefusedSyntax},
		{"1700000000:1:2:3::5", RefusedSyntax},
		{"1700000000:1:2:3:1_0:5", RefusedSyntax},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := parseUpdate(tc.in, protoDS, now)
			var ue *UpdateError
			if !errors.As(err, &ue) || ue.Reason != tc.want {
				t.Fatalf("parseUpdate(%q) = %v, want a %s refusal", tc.in, err, tc.want)
			}
			if !strings.Contains(ue.Error(), tc.in) {
				t.Errorf("message %q does not name the update", ue.Error())
			}
		})
	}
}

// TestFormatUpdateParsesBack: what PENDING shows parses back to the entry
// that was spooled.
func TestFormatUpdateParsesBack(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for _, in := range []string{
		"1700000000:1:2:3:4:U",
		"1700000000.007:0:-1:2.5:-0.125:U",
		"1700000001.999:U:U:U:U:U",
	} {
		e, err := parseUpdate(in, protoDS, now)
		if err != nil {
			t.Fatal(err)
		}
		out := formatUpdate(&e)
		back, err := parseUpdate(out, protoDS, now)
		if err != nil || !sameEntry(e, back) {
			t.Errorf("%q → %q → %+v, %v; want %+v", in, out, back, err, e)
		}
	}
}

func sameEntry(a, b spool.Entry) bool {
	if a.Time != b.Time || a.Milli != b.Milli || len(a.Values) != len(b.Values) {
		return false
	}
	for i := range a.Values {
		if a.Values[i] != b.Values[i] {
			return false
		}
	}
	return true
}

// FuzzParseUpdate: an update the parser accepts has one value per data
// source and a positive time, and its formatting (what the writer hands
// librrd, and PENDING shows) parses back to an entry formatted the same.
func FuzzParseUpdate(f *testing.F) {
	for _, s := range []string{"1700000000:1:2:3:4:5", "N:U:-3:1.5:1e-300:U", "1700000000.5:1:2:3:4", "x@1:2", "1700000000:1:2:3:000000000000123:5", "1700000000:1:2:3:999999999999999:5", "1700000000:1:2:3:9999999999999999:5"} {
		f.Add(s)
	}
	now := time.Unix(1_700_000_000, 0)
	f.Fuzz(func(t *testing.T, s string) {
		e, err := parseUpdate(s, protoDS, now)
		if err != nil {
			var ue *UpdateError
			if !errors.As(err, &ue) {
				t.Fatalf("error %v is not an UpdateError", err)
			}
			return
		}
		if e.Time <= 0 || e.Milli > 999 || len(e.Values) != len(protoDS) {
			t.Fatalf("accepted %q as %+v", s, e)
		}
		// A GAUGE's value is the number strtod reads, as ParseFloat does;
		// a COUNTER's the integer ParseUint reads.
		if vals := strings.Split(s, ":"); len(vals) == len(protoDS)+1 {
			if e.Values[3].Type == spool.Gauge {
				if want, err := strconv.ParseFloat(vals[4], 64); err != nil || e.Values[3].Gauge != want {
					t.Fatalf("%q: GAUGE value %v; ParseFloat reads %v, %v", s, e.Values[3].Gauge, want, err)
				}
			}
			if e.Values[0].Type == spool.Counter {
				if want, err := strconv.ParseUint(vals[1], 10, 64); err != nil || e.Values[0].Counter != want {
					t.Fatalf("%q: COUNTER value %v; ParseUint reads %v, %v", s, e.Values[0].Counter, want, err)
				}
			}
		}
		// librrd gets the same text back: "-0" and "0.0" may come back as
		// counters, but the values are librrd's same numbers.
		out := formatUpdate(&e)
		back, err := parseUpdate(out, protoDS, now)
		if err != nil || formatUpdate(&back) != out {
			t.Fatalf("%q → %q → %+v, %v", s, out, back, err)
		}
	})
}

// TestGroupSyncCoversEarlierAppends: a sync covers every append counted
// before it started, so the Updates waiting behind it do not sync again;
// an append after it needs a sync of its own.
func TestGroupSyncCoversEarlierAppends(t *testing.T) {
	var g groupSync
	syncs := 0
	sync := func() error { syncs++; return nil }
	a, b, c := g.appended.Add(1), g.appended.Add(2), g.appended.Add(1) // three Updates' appends
	for _, upTo := range []uint64{a, b, c} {
		if err := g.wait(upTo, sync); err != nil {
			t.Fatal(err)
		}
	}
	if syncs != 1 {
		t.Errorf("three Updates appended before one sync: %d syncs, want 1", syncs)
	}
	if err := g.wait(g.appended.Add(1), sync); err != nil || syncs != 2 {
		t.Errorf("an append after the sync: %d syncs, %v; want a second one", syncs, err)
	}
	failed := errors.New("syncfs: input/output error")
	if err := g.wait(g.appended.Add(1), func() error { return failed }); !errors.Is(err, failed) {
		t.Errorf("a failed sync: %v, want its error", err)
	}
	if err := g.wait(g.appended.Load(), sync); err != nil || syncs != 3 {
		t.Errorf("after a failed sync: %d syncs, %v; want the next Update to sync again", syncs, err)
	}
}
