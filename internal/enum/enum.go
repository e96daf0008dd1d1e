// Package enum holds the two functions every small named enumeration of
// spoold (sync policies and the like) needs: its name and its parser, from
// one table of names indexed by value. It starts no goroutines.
package enum

import (
	"fmt"
	"strconv"
	"strings"
)

// Name returns names[v], or "<typ>(<v>)" for a value outside the table.
func Name(names []string, typ string, v int) string {
	if v >= 0 && v < len(names) {
		return names[v]
	}
	return typ + "(" + strconv.Itoa(v) + ")"
}

// Parse returns the index of s in names; what names the setting in the
// error, which lists every name ("parse fsync policy "x": want none, batch
// or always").
func Parse(names []string, what, s string) (int, error) {
	for i, n := range names {
		if s == n {
			return i, nil
		}
	}
	want := strings.Join(names, ", ")
	if i := strings.LastIndex(want, ", "); i >= 0 {
		want = want[:i] + " or " + want[i+2:]
	}
	return 0, fmt.Errorf("parse %s %q: want %s", what, s, want)
}
