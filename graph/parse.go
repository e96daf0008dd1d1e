package graph

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The text form of a graph template, as a profiles file declares one
// (docs/profiles.md, "Graph templates"): a "graph <name>" line, then
// one line per setting or element, a keyword and its fields:
//
//	graph <name>
//	  title   <text>                                 {target} {instance} {alias} {key}
//	  vlabel  <text>
//	  lower   <number>             upper <number>    base 1000|1024
//	  def     <vname> <ds> [AVERAGE|MIN|MAX|LAST]
//	  cdef    <vname> <rpn>
//	  vdef    <vname> <rpn>
//	  area    <vname> <color> [stack] [<legend>]
//	  line    <vname> <color> [width=<px>] [stack] [<legend>]
//	  hrule   <vname|number> <color> [<legend>]
//	  gprint  <vname> <format>
//	  comment <text>
//
// A text is the rest of the line, or one string in double quotes (Go's
// syntax) when it must start with a field's word or keep its spaces.

// SourceLine is one line of a graph block: its number in the file and its
// text (comments and blank lines already left out).
type SourceLine struct {
	Line int
	Text string
}

// TemplateError is a problem in a graph block: the file and line and
// what is wrong.
type TemplateError struct {
	File string
	Line int
	Msg  string
}

func (e *TemplateError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

var graphKeywords = map[string]bool{
	"title": true, "vlabel": true, "lower": true, "upper": true, "base": true, "units": true,
	"def": true, "cdef": true, "vdef": true, "area": true, "line": true,
	"hrule": true, "gprint": true, "comment": true,
}

// IsKeyword reports whether kw starts a line of a graph block: a
// profiles parser gives ParseTemplate the lines after "graph <name>"
// as long as their first field is one of these.
func IsKeyword(kw string) bool { return graphKeywords[kw] }

// ParseTemplate parses a graph block of file: header is its
// "graph <name>" line and lines the ones that follow. Errors are
// *TemplateError naming file and the line at fault.
func ParseTemplate(file string, header SourceLine, lines []SourceLine) (*Template, error) {
	f := strings.Fields(header.Text)
	if len(f) != 2 || f[0] != "graph" {
		return nil, &TemplateError{file, header.Line, `want "graph <name>"`}
	}
	if len(lines) > maxTemplateElements+8 {
		return nil, &TemplateError{file, lines[maxTemplateElements+8].Line,
			fmt.Sprintf("graph %s: more than %d lines", f[1], maxTemplateElements+8)}
	}
	t := Template{Name: f[1]}
	elemLine := []int{}
	seen := map[string]int{}
	for _, l := range lines {
		kw := peekField(l.Text)
		if prev, dup := seen[kw]; dup && !isElementKeyword(kw) {
			return nil, &TemplateError{file, l.Line, fmt.Sprintf("graph %s: %s already set on line %d", t.Name, kw, prev)}
		}
		seen[kw] = l.Line
		e, err := parseGraphLine(&t, l.Text)
		if err != nil {
			return nil, &TemplateError{file, l.Line, fmt.Sprintf("graph %s: %v", t.Name, err)}
		}
		if e != nil {
			t.Elements = append(t.Elements, *e)
			elemLine = append(elemLine, l.Line)
		}
	}
	out, at, err := buildTemplate(t)
	if err != nil {
		line := header.Line
		switch {
		case at >= 0:
			line = elemLine[at]
		case at == atTitle:
			line = seen["title"]
		case at == atVLabel:
			line = seen["vlabel"]
		}
		return nil, &TemplateError{file, line, err.Error()}
	}
	return out, nil
}

func isElementKeyword(kw string) bool {
	switch kw {
	case "title", "vlabel", "lower", "upper", "base", "units":
		return false
	}
	return true
}

// parseGraphLine applies a setting to t or returns the element of a line.
func parseGraphLine(t *Template, text string) (*Element, error) {
	kw, rest := nextField(text)
	switch kw {
	case "title", "vlabel":
		s, err := parseText(rest)
		if kw == "title" {
			t.Title = s
		} else {
			t.VLabel = s
		}
		return nil, err
	case "lower", "upper":
		v, err := parseNumberField(kw, rest)
		if kw == "lower" {
			t.Lower = &v
		} else {
			t.Upper = &v
		}
		return nil, err
	case "base":
		n, err := strconv.Atoi(strings.TrimSpace(rest))
		if err != nil || n != 1000 && n != 1024 {
			return nil, fmt.Errorf("base %q: want 1000 or 1024", strings.TrimSpace(rest))
		}
		t.Base = n
		return nil, nil
	case "units":
		if strings.TrimSpace(rest) != "none" {
			return nil, fmt.Errorf("units %q: want none (no SI prefixes on the axis)", strings.TrimSpace(rest))
		}
		t.PlainUnits = true
		return nil, nil
	case "def":
		f := strings.Fields(rest)
		if len(f) < 2 || len(f) > 3 {
			return nil, errors.New(`want "def <vname> <ds> [AVERAGE|MIN|MAX|LAST]"`)
		}
		e := &Element{Kind: Def, VName: f[0], DS: f[1]}
		if len(f) == 3 {
			e.CF = f[2]
		}
		return e, nil
	case "cdef", "vdef":
		f := strings.Fields(rest)
		if len(f) != 2 {
			return nil, fmt.Errorf(`want "%s <vname> <rpn>" (the expression without spaces)`, kw)
		}
		k := CDef
		if kw == "vdef" {
			k = VDef
		}
		return &Element{Kind: k, VName: f[0], RPN: f[1]}, nil
	case "area", "line", "hrule":
		return parseDrawing(kw, rest)
	case "gprint":
		name, rest := nextField(rest)
		format, err := parseText(rest)
		if name == "" || format == "" {
			return nil, errors.New(`want "gprint <vname> <format>"`)
		}
		return &Element{Kind: GPrint, VName: name, Format: format}, err
	case "comment":
		s, err := parseText(rest)
		return &Element{Kind: Comment, Legend: s}, err
	}
	return nil, fmt.Errorf("unknown keyword %q: want title, vlabel, lower, upper, base, def, cdef, vdef, area, line, hrule, gprint or comment", kw)
}

func parseDrawing(kw, rest string) (*Element, error) {
	name, rest := nextField(rest)
	color, rest := nextField(rest)
	if name == "" || color == "" {
		return nil, fmt.Errorf(`want "%s <vname> <color> ..."`, kw)
	}
	e := &Element{Kind: Area, VName: name, Color: color}
	switch kw {
	case "line":
		e.Kind = Line
		if w, ok := strings.CutPrefix(peekField(rest), "width="); ok {
			_, rest = nextField(rest)
			v, err := strconv.ParseFloat(w, 64)
			if err != nil {
				return nil, fmt.Errorf("width %q: want a number of pixels", w)
			}
			e.Width = v
		}
	case "hrule":
		e.Kind = HRule
		if !validVName(name) {
			v, err := parseNumberField("hrule", name)
			if err != nil {
				return nil, err
			}
			e.VName, e.Value = "", v
		}
	}
	if kw != "hrule" && peekField(rest) == "stack" {
		_, rest = nextField(rest)
		e.Stack = true
	}
	var err error
	e.Legend, err = parseText(rest)
	return e, err
}

func parseNumberField(kw, s string) (float64, error) {
	s = strings.TrimSpace(s)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !rpnNumber.MatchString(s) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s %q: want a number", kw, s)
	}
	return v, nil
}

// nextField splits the first whitespace-separated field off s.
func nextField(s string) (field, rest string) {
	s = strings.TrimLeft(s, " \t")
	i := strings.IndexAny(s, " \t")
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i:]
}

func peekField(s string) string { f, _ := nextField(s); return f }

// parseText is the rest of a line, trimmed, or one quoted string.
func parseText(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, `"`) {
		return s, nil
	}
	u, err := strconv.Unquote(s)
	if err != nil {
		return "", fmt.Errorf("text %s: a quoted text is one string in Go's syntax", s)
	}
	return u, nil
}
