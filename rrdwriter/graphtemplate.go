package rrdwriter

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/spoold/spoold/rrd"
)

// A graph template says how to draw one RRD file: the DEF, CDEF and VDEF
// definitions of rrdgraph_data(1) and the AREA, LINE, GPRINT, HRULE and
// COMMENT elements of rrdgraph_graph(1), with a title and legends that may
// name variables ({target}, {instance}, {alias}, {key}). It names data
// sources only: Graph puts the key's own file into every DEF, so no
// template, built-in or an operator's, reads another file. The elements are
// checked when a template is built (NewGraphTemplate, ParseGraphTemplate)
// and formatted into librrd's arguments when it is drawn, with every text
// escaped, so a legend cannot add an element or an option.

// ElementKind is the kind of a graph template element.
type ElementKind uint8

// Element kinds, as rrdgraph spells them.
const (
	Def ElementKind = iota + 1
	CDef
	VDef
	Area
	Line
	GPrint
	HRule
	Comment
)

var elementNames = [...]string{Def: "DEF", CDef: "CDEF", VDef: "VDEF", Area: "AREA", Line: "LINE",
	GPrint: "GPRINT", HRule: "HRULE", Comment: "COMMENT"}

func (k ElementKind) String() string {
	if int(k) < len(elementNames) && elementNames[k] != "" {
		return elementNames[k]
	}
	return "element(" + strconv.Itoa(int(k)) + ")"
}

// GraphElement is one definition or drawing element of a template.
type GraphElement struct {
	Kind ElementKind
	// VName is the name a DEF, CDEF or VDEF defines, or the one an AREA,
	// LINE, GPRINT or HRULE draws (an HRULE: a VDEF's, or Value).
	VName string
	DS    string  // DEF: the data source of the key's file
	CF    string  // DEF: AVERAGE (when empty), MIN, MAX or LAST
	RPN   string  // CDEF, VDEF: the expression
	Width float64 // LINE: 0.5 to 10 pixels; 0 is 1
	Color string  // AREA, LINE, HRULE: RRGGBB or RRGGBBAA
	Stack bool    // AREA, LINE: on top of the previous one
	// Legend is the text of an AREA, LINE, HRULE or COMMENT; it may name
	// variables.
	Legend string
	Format string  // GPRINT: one %lf-style conversion, optionally %s
	Value  float64 // HRULE without VName: the value drawn
}

// GraphTemplate is a named way of drawing an RRD file. Build one with
// NewGraphTemplate or ParseGraphTemplate, which check it; it is not changed
// afterwards.
type GraphTemplate struct {
	Name   string
	Title  string // may name variables; empty: GraphOptions.Title
	VLabel string // the vertical axis label
	// Lower and Upper are the axis limits (rrdgraph --lower-limit,
	// --upper-limit); nil: autoscaled.
	Lower, Upper *float64
	Base         int // 1000 (the default when 0) or 1024
	Elements     []GraphElement
}

// GraphVars are the values a template's title and legends may name.
type GraphVars struct {
	Target   string // {target}: the device's name
	Instance string // {instance}: the table row's instance name
	Alias    string // {alias}: the row's alias (ifAlias), from the device
	Key      string // {key}: the RRD file's key
}

// Bounds of a template, so that an operator's file cannot make a graph
// unbounded: the elements, and each text. The values librrd fetches are
// bounded by GraphOptions.MaxDS (DEFs) and MaxBytes (graphcost.go).
const (
	maxTemplateElements = 64
	maxTemplateText     = 200
	maxRPNTokens        = 64
	maxVNameLen         = 32
	maxVarValue         = 100
)

// ErrBadTemplate is wrapped by the errors of NewGraphTemplate.
var ErrBadTemplate = errors.New("bad graph template")

// NewGraphTemplate checks t and returns it: names, colors, RPN
// expressions (only the operators of rpnOps, every name defined before it
// is used, a stack that ends with one value), formats and the bounds
// above. Its errors wrap ErrBadTemplate and name the element by number
// (from 1) and kind.
func NewGraphTemplate(t GraphTemplate) (*GraphTemplate, error) {
	out, _, err := buildTemplate(t)
	return out, err
}

// Where buildTemplate found a problem, other than at an element's index.
const (
	atTemplate = -1
	atTitle    = -2
	atVLabel   = -3
)

// buildTemplate is NewGraphTemplate, also saying where the problem is: the
// element's index, or atTemplate, atTitle, atVLabel.
func buildTemplate(t GraphTemplate) (*GraphTemplate, int, error) {
	bad := func(at int, format string, args ...any) (*GraphTemplate, int, error) {
		return nil, at, fmt.Errorf("%w %s: %s", ErrBadTemplate, t.Name, fmt.Sprintf(format, args...))
	}
	if !ValidTemplateName(t.Name) {
		return nil, atTemplate, fmt.Errorf("%w %q: a name is 1 to 32 of a-z 0-9 _ -, starting with a letter", ErrBadTemplate, t.Name)
	}
	if err := checkText(t.Title); err != nil {
		return bad(atTitle, "title: %v", err)
	}
	if err := checkText(t.VLabel); err != nil {
		return bad(atVLabel, "vlabel: %v", err)
	}
	if t.Base == 0 {
		t.Base = 1000
	}
	switch {
	case t.Base != 1000 && t.Base != 1024:
		return bad(atTemplate, "base %d: want 1000 or 1024", t.Base)
	case !finite(t.Lower) || !finite(t.Upper):
		return bad(atTemplate, "lower and upper limits must be finite")
	case t.Lower != nil && t.Upper != nil && *t.Lower >= *t.Upper:
		return bad(atTemplate, "lower limit %g not below upper limit %g", *t.Lower, *t.Upper)
	case len(t.Elements) == 0:
		return bad(atTemplate, "no elements")
	case len(t.Elements) > maxTemplateElements:
		return bad(maxTemplateElements, "%d elements, at most %d", len(t.Elements), maxTemplateElements)
	}
	t.Elements = append([]GraphElement(nil), t.Elements...)
	names := map[string]ElementKind{}
	draws := 0
	for i := range t.Elements {
		e := &t.Elements[i]
		if err := checkElement(e, names); err != nil {
			return bad(i, "element %d (%s): %v", i+1, e.Kind, err)
		}
		if e.Kind == Area || e.Kind == Line {
			draws++
		}
	}
	if draws == 0 {
		return bad(atTemplate, "no AREA or LINE: nothing is drawn")
	}
	return &t, 0, nil
}

// DS returns the data source of each DEF, in order: what Graph fetches.
func (t *GraphTemplate) DS() []string {
	var ds []string
	for _, e := range t.Elements {
		if e.Kind == Def {
			ds = append(ds, e.DS)
		}
	}
	return ds
}

// Fits reports whether a file with the data sources ds can be drawn with
// t: it has every data source t's DEFs name.
func (t *GraphTemplate) Fits(ds []string) bool {
	for _, need := range t.DS() {
		found := false
		for _, have := range ds {
			if have == need {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func checkElement(e *GraphElement, names map[string]ElementKind) error {
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

func checkDrawing(e *GraphElement) error {
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
