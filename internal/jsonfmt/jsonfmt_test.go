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
