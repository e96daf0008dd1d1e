package graph

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/spoold/spoold/rrd"
)

// checkElement checks one element of a template against the names defined
// before it (names: their kinds), and adds the name it defines.
func checkElement(e *Element, names map[string]ElementKind) error {
	define := func() error {
		if !validVName(e.VName) {
			return fmt.Errorf("name %q: want 1 to %d of a-z 0-9 _, starting with a letter", e.VName, maxVNameLen)
		}
		if _, dup := names[e.VName]; dup {
			return fmt.Errorf("name %q defined twice", e.VName)
		}
		names[e.VName] = e.Kind
		return nil
	}
	var err error
	switch e.Kind {
	case Def:
		if !rrd.ValidDSName(e.DS) {
			return fmt.Errorf("data source %q: a data source name is 1 to 19 of A-Z a-z 0-9 _", e.DS)
		}
		switch e.CF {
		case "":
			e.CF = "AVERAGE"
		case "AVERAGE", "MIN", "MAX", "LAST":
		default:
			return fmt.Errorf("consolidation %q: want AVERAGE, MIN, MAX or LAST", e.CF)
		}
		return define()
	case CDef:
		if err = checkCDefRPN(e.RPN, names); err != nil {
			return err
		}
		return define()
	case VDef:
		if err = checkVDefRPN(e.RPN, names); err != nil {
			return err
		}
		return define()
	case Area, Line:
		if err = usesSeries(e.VName, names); err == nil {
			err = checkDrawing(e)
		}
	case GPrint:
		if k, ok := names[e.VName]; !ok || k != VDef {
			return fmt.Errorf("%q is not a VDEF defined before it (GPRINT prints a VDEF)", e.VName)
		}
		err = checkFormat(e.Format)
	case HRule:
		if e.VName != "" {
			if k, ok := names[e.VName]; !ok || k != VDef {
				return fmt.Errorf("%q is not a VDEF defined before it", e.VName)
			}
		} else if math.IsNaN(e.Value) || math.IsInf(e.Value, 0) {
			return errors.New("an HRULE needs a VDEF or a finite value")
		}
		err = checkDrawing(e)
	case Comment:
		if e.Legend == "" {
			return errors.New("empty comment")
		}
		err = checkText(e.Legend)
	default:
		return errors.New("unknown element kind")
	}
	return err
}

// usesSeries checks that name is a DEF or CDEF defined before.
func usesSeries(name string, names map[string]ElementKind) error {
	if k, ok := names[name]; !ok || (k != Def && k != CDef) {
		return fmt.Errorf("%q is not a DEF or CDEF defined before it", name)
	}
	return nil
}

func checkDrawing(e *Element) error {
	if !validColor(e.Color) {
		return fmt.Errorf("color %q: want RRGGBB or RRGGBBAA in hex", e.Color)
	}
	if e.Kind == Line && e.Width != 0 && !(e.Width >= 0.5 && e.Width <= 10) {
		return fmt.Errorf("width %g: want 0.5 to 10", e.Width)
	}
	if e.Kind == HRule && e.Stack {
		return errors.New("an HRULE does not stack")
	}
	return checkText(e.Legend)
}

// checkText bounds a text and refuses control characters; the variables it
// names must be known.
func checkText(s string) error {
	if len(s) > maxTemplateText {
		return fmt.Errorf("text longer than %d bytes", maxTemplateText)
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return fmt.Errorf("text %q: control character or invalid UTF-8", s)
		}

	}
	if i := strings.IndexByte(s, '\\'); i >= 0 && (i != len(s)-2 || !strings.ContainsRune("lrcjgs", rune(s[len(s)-1]))) {
		return fmt.Errorf("text %q: a backslash other than one of rrdgraph's line ends \\l \\r \\c \\j \\g \\s at the end", s)
	}
	rest := s
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return nil
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return fmt.Errorf("text %q: '{' without '}' (variables are {target}, {instance}, {alias}, {key})", s)
		}
		switch v := rest[i+1 : i+j]; v {
		case "target", "instance", "alias", "key":
		default:
			return fmt.Errorf("text %q: unknown variable {%s} (want {target}, {instance}, {alias} or {key})", s, v)
		}
		rest = rest[i+j+1:]
	}
}

// ValidTemplateName reports whether s is a graph template's name: 1 to 32
// of a-z 0-9 _ -, starting with a letter.
func ValidTemplateName(s string) bool {
	if s == "" || len(s) > 32 || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validVName: lower case, so that no name is one of the RPN operators
// (all upper case).
func validVName(s string) bool {
	if s == "" || len(s) > maxVNameLen || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func validColor(s string) bool {
	if len(s) != 6 && len(s) != 8 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// finite reports whether f is nil or a finite number.
func finite(f *float64) bool { return f == nil || !math.IsNaN(*f) && !math.IsInf(*f, 0) }
