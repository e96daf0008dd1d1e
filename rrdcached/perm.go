package rrdcached

import (
	"fmt"
	"sort"
	"strings"
)

// Permissions is the set of commands one listener accepts, as rrdcached's
// -P gives it; HELP and QUIT are always accepted and "." counts as BATCH,
// as in rrdcached. Names are stored in rrdcached's spelling (upper case).
type Permissions map[string]bool

// ReadCommands are the commands a TCP listener accepts when it is given no
// permission list: those that neither add, change nor remove data, nor
// change what the daemon will write: PING, HELP, QUIT, STATS, QUEUE,
// PENDING, FIRST, LAST, INFO, FETCH, FETCHBIN, LIST, and FLUSH (which only
// writes what is already acknowledged, as `rrdtool graph --daemon` asks
// before reading). rrdcached itself allows everything on every socket.
var ReadCommands = []string{"PING", "HELP", "QUIT", "STATS", "QUEUE", "PENDING",
	"FIRST", "LAST", "INFO", "FETCH", "FETCHBIN", "LIST", "FLUSH"}

// AllPermissions returns every command of rrdcached's table.
func AllPermissions() Permissions {
	p := Permissions{}
	for _, c := range commands {
		p[c.name] = true
	}
	return p
}

// ParsePermissions parses an rrdcached -P list: command words separated by
// commas or spaces, in any case. An unknown word is an error naming it;
// an empty list is an error too (rrdcached would then allow everything,
// which is never what a written list means).
func ParsePermissions(list string) (Permissions, error) {
	p := Permissions{}
	for _, w := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		c := lookupCommand(w)
		if c == nil {
			return nil, fmt.Errorf("parse permissions %q: %q is not an rrdcached command", list, w)
		}
		p[c.name] = true
	}
	if len(p) == 0 {
		return nil, fmt.Errorf("parse permissions %q: no command named", list)
	}
	return p, nil
}

// allows reports whether the listener accepts the command named name
// (rrdcached's spelling, from the command table).
func (p Permissions) allows(name string) bool {
	switch name {
	case "HELP", "QUIT":
		return true
	case ".":
		name = "BATCH"
	}
	return p[name]
}

// String lists the permissions as ParsePermissions reads them, sorted.
func (p Permissions) String() string {
	names := make([]string, 0, len(p))
	for n := range p {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}
