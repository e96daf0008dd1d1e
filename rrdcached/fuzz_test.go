package rrdcached_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/spoold/spoold/rrdcached"
)

// FuzzParseCommand: a line parses without panic into the fields
// rrdcached's buffer_get_field reads from it (cFields); only a broken
// command word is an error; a parsed command serialises to a line that
// parses to the same command.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"PING", "UPDATE a.rrd 1:2", `UPDATE a\ b 1`, "x\x00y", `a \`, `\`, "", "  ", `BATCH\\`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.ReplaceAll(line, []byte("\n"), nil)
		c, err := rrdcached.ParseCommand(line)
		want, broken := cFields(line)
		if err != nil {
			if len(want) != 0 || !broken {
				t.Fatalf("ParseCommand(%q): %v; rrdcached reads %q", line, err, want)
			}
			return
		}
		if got := append([]string{c.Name}, c.Args...); !reflect.DeepEqual(got, want) || c.Broken != broken {
			t.Fatalf("ParseCommand(%q) = %q broken %v; rrdcached reads %q broken %v", line, got, c.Broken, want, broken)
		}
		again, err := rrdcached.ParseCommand([]byte(c.Line()))
		if err != nil {
			t.Fatalf("ParseCommand(%q) = %#v; its Line %q: %v", line, c, c.Line(), err)
		}
		if again.Name != c.Name || again.Broken != c.Broken || !reflect.DeepEqual(append([]string{}, again.Args...), append([]string{}, c.Args...)) {
			t.Fatalf("ParseCommand(%q) = %#v; its Line %q parses to %#v", line, c, c.Line(), again)
		}
	})
}

// FuzzServerReply sends one line and then PING to a server: the server
// never panics, an error reply is one well-formed status line, and the
// PING after it is answered PONG (the connection is still in step). Lines
// that end the connection as rrdcached's would (QUIT, a broken command
// word) or open a BATCH are skipped.
func FuzzServerReply(f *testing.F) {
	for _, s := range []string{"PING", "UPDATE a.rrd 1700000100:1:2", "UPDATE ../x 1", "FETCH a.rrd AVERAGE 0x10 -5 x", "LIST RECURSIVE /", "HELP", "CREATE z.rrd -b", "\x00\xff\r", "FIRST a.rrd 99999999999"} {
		f.Add([]byte(s))
	}
	s := startServer(f, nil)
	f.Fuzz(func(t *testing.T, line []byte) {
		line = bytes.TrimSuffix(bytes.ReplaceAll(line, []byte("\n"), nil), []byte("\r"))
		c, err := rrdcached.ParseCommand(line)
		if err != nil || len(line) > 8190 {
			return
		}
		switch w := strings.ToUpper(c.Name); w {
		case "QUIT", "BATCH", "FETCHBIN":
			return
		}
		cl := s.dial(t, 0)
		rep := cl.do(string(line))
		if !rep.OK() && (rep.Status != -1 || len(rep.Lines) != 0 || strings.Contains(rep.Message, "\n")) {
			t.Fatalf("%q: error reply %#v is not one status line", line, rep)
		}
		if pong := cl.do("PING"); pong.Message != "PONG" {
			t.Fatalf("%q, then PING: %#v", line, pong)
		}
	})
}

// cFields reads line's fields as rrd_daemon.c does: the line ends in a NUL
// byte, and buffer_get_field is called while bytes are left; a field that
// runs off the end (a lone backslash escaping the final NUL) fails, and the
// fields stop there.
func cFields(line []byte) (fields []string, broken bool) {
	buf := append(append([]byte{}, line...), 0)
	pos := 0
	for pos < len(buf) {
		var field []byte
		ok := false
		for pos < len(buf) {
			b := buf[pos]
			if b == ' ' || b == 0 {
				pos++
				ok = true
				break
			}
			if b == '\\' {
				if pos >= len(buf)-1 {
					break
				}
				pos++
			}
			field = append(field, buf[pos])
			pos++
		}
		if !ok {
			return fields, true
		}
		fields = append(fields, string(field))
	}
	return fields, false
}
