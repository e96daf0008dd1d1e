package rrdcached_test

import (
	"bufio"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/spoold/spoold/rrdcached"
)

func TestParseCommand(t *testing.T) {
	for _, tc := range []struct {
		line string
		want rrdcached.Command
	}{
		{"PING", rrdcached.Command{Name: "PING", Args: []string{}}},
		{"", rrdcached.Command{Name: "", Args: []string{}}},
		{"UPDATE a.rrd 1:2", rrdcached.Command{Name: "UPDATE", Args: []string{"a.rrd", "1:2"}}},
		{"UPDATE  a.rrd", rrdcached.Command{Name: "UPDATE", Args: []string{"", "a.rrd"}}},
		{"UPDATE a.rrd ", rrdcached.Command{Name: "UPDATE", Args: []string{"a.rrd", ""}}},
		{"UPDATE\x00a.rrd", rrdcached.Command{Name: "UPDATE", Args: []string{"a.rrd"}}},
		{`UPDATE my\ file.rrd 1:2`, rrdcached.Command{Name: "UPDATE", Args: []string{"my file.rrd", "1:2"}}},
		{`UPDATE a\\b`, rrdcached.Command{Name: "UPDATE", Args: []string{`a\b`}}},
		{"UPDATE a\\\x00b", rrdcached.Command{Name: "UPDATE", Args: []string{"a\x00b"}}},
		{`UPDATE a.rrd 1:2\`, rrdcached.Command{Name: "UPDATE", Args: []string{"a.rrd"}, Broken: true}},
		{`UPDATE \`, rrdcached.Command{Name: "UPDATE", Args: []string{}, Broken: true}},
	} {
		t.Run(fmt.Sprintf("%q", tc.line), func(t *testing.T) {
			got, err := rrdcached.ParseCommand([]byte(tc.line))
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != tc.want.Name || got.Broken != tc.want.Broken || !reflect.DeepEqual(append([]string{}, got.Args...), tc.want.Args) {
				t.Errorf("ParseCommand(%q) = %#v, want %#v", tc.line, got, tc.want)
			}
		})
	}
	for _, line := range []string{`\`, `PING\`} {
		if c, err := rrdcached.ParseCommand([]byte(line)); !errors.Is(err, rrdcached.ErrBrokenCommand) {
			t.Errorf("ParseCommand(%q) = %#v, %v; want ErrBrokenCommand", line, c, err)
		}
	}
}

func TestReadReply(t *testing.T) {
	in := "2 Statistics follow\nA: 1\r\nB: 2\n-1 No such file: x\n0 PONG\n3 short\nonly one\n"
	r := bufio.NewReader(strings.NewReader(in))
	want := []rrdcached.Reply{
		{Status: 2, Message: "Statistics follow", Lines: []string{"A: 1", "B: 2"}},
		{Status: -1, Message: "No such file: x"},
		{Status: 0, Message: "PONG"},
	}
	for i, w := range want {
		got, err := rrdcached.ReadReply(r)
		if err != nil || !reflect.DeepEqual(got, w) {
			t.Fatalf("reply %d = %#v, %v; want %#v", i, got, err, w)
		}
		if (w.Status < 0) != (got.Err() != nil) {
			t.Errorf("reply %d: Err() = %v", i, got.Err())
		}
	}
	if _, err := rrdcached.ReadReply(r); err == nil || !strings.Contains(err.Error(), "line 2 of 3") {
		t.Errorf("a reply cut short: err %v, want one naming line 2 of 3", err)
	}
	for _, bad := range []string{"PONG\n", "0\n", "x y\n", ""} {
		if _, err := rrdcached.ReadReply(bufio.NewReader(strings.NewReader(bad))); err == nil {
			t.Errorf("ReadReply(%q): no error", bad)
		}
	}
}

func TestParsePermissions(t *testing.T) {
	p, err := rrdcached.ParsePermissions("ping, update,FLUSH")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.String(); got != "FLUSH,PING,UPDATE" {
		t.Errorf("permissions %q, want FLUSH,PING,UPDATE", got)
	}
	for _, bad := range []string{"", " , ", "PING,FOO"} {
		if _, err := rrdcached.ParsePermissions(bad); err == nil {
			t.Errorf("ParsePermissions(%q): no error", bad)
		}
	}
	if _, err := rrdcached.ParsePermissions(strings.Join(rrdcached.ReadCommands, ",")); err != nil {
		t.Errorf("ReadCommands: %v", err)
	}
}
