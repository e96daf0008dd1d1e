// Package optcheck holds the error every package's Options.Validate
// returns for an option out of range: FieldError names the field, so that
// a caller which set the field from a flag, a file or an HTTP parameter
// can name that instead, with errors.As, without reading the message.
package optcheck

import (
	"errors"
	"strings"
)

// FieldError is an option out of range. Msg is the rule it breaks, for a
// reader who knows which field it is ("must be at least 1"); another field
// it names is written {Field} (braces around anything but letters, digits
// and '_' are kept as they are, so a value such as a path may hold them) ("must be 0 to {Interval}"), so that Text
// can name that one the caller's way too.
type FieldError struct {
	Field string // the option as its package names it: "Interval", "loader_files"
	Msg   string // the rule broken; other fields as {Field}
}

// Errorf returns a *FieldError of field with msg.
func Errorf(field, msg string) error { return &FieldError{Field: field, Msg: msg} }

// Error is the field, then the rule: "Interval must be positive".
func (e *FieldError) Error() string {
	return e.Field + " " + e.Text(func(f string) string { return f })
}

// Text is Msg with each {Field} it names written name(Field).
func (e *FieldError) Text(name func(field string) string) string {
	var b strings.Builder
	rest := e.Msg
	for {
		open := strings.IndexByte(rest, '{')
		end := strings.IndexByte(rest[max(open, 0):], '}')
		if open < 0 || end < 0 {
			b.WriteString(rest)
			return b.String()
		}
		end += open
		b.WriteString(rest[:open])
		if ref := rest[open+1 : end]; isName(ref) {
			b.WriteString(name(ref))
		} else { // a value that holds braces, such as a path
			b.WriteString(rest[open : end+1])
		}
		rest = rest[end+1:]
	}
}

// isName reports whether s can be a field's name: letters, digits, '_'.
func isName(s string) bool {
	for _, r := range s {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return s != ""
}

// Refs returns the fields Msg names, in order.
func (e *FieldError) Refs() []string {
	var refs []string
	e.Text(func(f string) string { refs = append(refs, f); return "" })
	return refs
}

// As returns the *FieldError in err's chain, or nil.
func As(err error) *FieldError {
	var fe *FieldError
	if errors.As(err, &fe) {
		return fe
	}
	return nil
}
