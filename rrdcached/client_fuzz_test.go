package rrdcached

import (
	"bufio"
	"net"
	"strings"
	"testing"
)

// FuzzReadReply: whatever bytes a peer sends, the reply reader returns an
// error or a reply with exactly the lines its status announced, which
// rendered again as rrdcached renders it reads back the same.
func FuzzReadReply(f *testing.F) {
	for _, s := range []string{
		"0 PONG\n", "-1 No such file: /x.rrd\n", "2 errors\n3 illegal\n5 x\n", "1 Info\nstep 1 300\n",
		"3 short\nonly one\n", "x garbage\n", "", "0", "-5 neg\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := false
		r, err := readReply(bufio.NewReader(strings.NewReader(string(b))), &got)
		if err != nil {
			return
		}
		if want := max(r.Status, 0); len(r.Lines) != want {
			t.Fatalf("status %d, %d lines", r.Status, len(r.Lines))
		}
		again, err := readReply(bufio.NewReader(strings.NewReader(r.String())), &got)
		if err != nil || again.Status != r.Status || again.Message != r.Message || strings.Join(again.Lines, "\n") != strings.Join(r.Lines, "\n") {
			t.Fatalf("reply %+v rendered %q reads back %+v, %v", r, r.String(), again, err)
		}
	})
}

// FuzzParseInfo: a parsed INFO line renders back to itself.
func FuzzParseInfo(f *testing.F) {
	for _, s := range []string{"last_update 1 1700000000", "ds[a].type 2 GAUGE", "step 1", "x y z", " 1 2", "rra[0].cf 2 AVERAGE MAX"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		vals, err := ParseInfo([]string{line})
		if err != nil {
			return
		}
		v := vals[0]
		typ := strings.SplitN(line, " ", 3)[1] // the type as sent ("+1", "01" parse too)
		if v.Key == "" || strings.Contains(v.Key, " ") || v.Key+" "+typ+" "+v.Value != line {
			t.Fatalf("%q parsed as %+v", line, v)
		}
	})
}

// FuzzParseAddress: an address that parses renders as one that parses to
// it again, unix with a path or tcp with a host and a port.
func FuzzParseAddress(f *testing.F) {
	for _, s := range []string{"unix:/x", "/run/s", "tcp:127.0.0.1:42217", "h", "[::1]", "[::1]:9", "::1", "tcp:", "a:b:c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAddress(s)
		if err != nil {
			return
		}
		switch a.Network {
		case "unix":
			if a.Addr == "" {
				t.Fatalf("%q: unix without a path", s)
			}
		case "tcp":
			if h, p, err := net.SplitHostPort(a.Addr); err != nil || h == "" || p == "" {
				t.Fatalf("%q: tcp address %q is not host:port", s, a.Addr)
			}
		default:
			t.Fatalf("%q: network %q", s, a.Network)
		}
		if b, err := ParseAddress(a.String()); err != nil || b != a {
			t.Fatalf("%q → %v renders %q → %v, %v", s, a, a.String(), b, err)
		}
	})
}
