package jsonfmt

import (
	"encoding/json"
	"testing"
	"time"
)

func TestForms(t *testing.T) {
	at := time.Date(2026, 3, 14, 12, 0, 0, 500, time.FixedZone("x", 3600))
	for _, c := range []struct {
		v    any
		want string
	}{
		{Time{}, `null`},
		{Time(at), `"2026-03-14T11:00:00.0000005Z"`},
		{Seconds(0), `0`},
		{Seconds(1500 * time.Millisecond), `1.5`},
		{Seconds(-time.Microsecond), `-0.000001`},
	} {
		b, err := json.Marshal(c.v)
		if err != nil || string(b) != c.want {
			t.Errorf("%#v: %s %v, want %s", c.v, b, err, c.want)
		}
	}
}

func TestJoin(t *testing.T) {
	for _, c := range []struct {
		objs []string
		want string
	}{
		{[]string{`{"a":1}`, `{"b":2}`}, `{"a":1,"b":2}`},
		{[]string{`{}`, ` {"b":2} `}, `{"b":2}`},
		{[]string{`{"a":1}`, `{}`}, `{"a":1}`},
		{nil, `{}`},
	} {
		var objs [][]byte
		for _, o := range c.objs {
			objs = append(objs, []byte(o))
		}
		got, err := Join(objs...)
		if err != nil || string(got) != c.want || !json.Valid(got) {
			t.Errorf("Join(%q) = %s %v, want %s", c.objs, got, err, c.want)
		}
	}
	for _, bad := range []string{`[1]`, `1`, `{`, ``} {
		if _, err := Join([]byte(bad)); err == nil {
			t.Errorf("Join(%q) accepted", bad)
		}
	}
}

// TestMarshalEmbedded: the fields of an embedded struct are the outer
// object's members, their times and durations rendered by the same rules.
func TestMarshalEmbedded(t *testing.T) {
	type Inner struct {
		At  time.Time     `json:"at"`
		RTT time.Duration `json:"rtt_seconds"`
		N   int           `json:"n"`
	}
	type outer struct {
		Inner
		Name string        `json:"name"`
		Wait time.Duration `json:"wait_seconds"`
	}
	b, err := Marshal(outer{Inner{RTT: 35 * time.Millisecond, N: 2}, "x", time.Second})
	if want := `{"at":null,"rtt_seconds":0.035,"n":2,"name":"x","wait_seconds":1}`; err != nil || string(b) != want {
		t.Fatalf("Marshal = %s %v, want %s", b, err, want)
	}
}
