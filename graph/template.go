package graph

import (
	"errors"
	"fmt"
	"strconv"
)

// A graph template says how to draw one RRD file: the DEF, CDEF and VDEF
// definitions of rrdgraph_data(1) and the AREA, LINE, GPRINT, HRULE and
// COMMENT elements of rrdgraph_graph(1), with a title and legends that may
// name variables ({target}, {instance}, {alias}, {key}). It names data
// sources only: Draw puts the key's own file into every DEF, so no
// template, built-in or an operator's, reads another file. The elements are
// checked when a template is built (NewTemplate, ParseTemplate)
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

// Element is one definition or drawing element of a template.
type Element struct {
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

// Template is a named way of drawing an RRD file. Build one with
// NewTemplate or ParseTemplate, which check it; it is not changed
// afterwards.
type Template struct {
	Name   string
	Title  string // may name variables; empty: Options.Title
	VLabel string // the vertical axis label
	// Lower and Upper are the axis limits (rrdgraph --lower-limit,
	// --upper-limit); nil: autoscaled.
	Lower, Upper *float64
	Base         int // 1000 (the default when 0) or 1024
	// PlainUnits draws the axis without SI prefixes ("0.7", not "700 m";
	// rrdgraph --units-exponent 0): for small plain numbers like a load.
	PlainUnits bool
	Elements   []Element
}

// Vars are the values a template's title and legends may name.
type Vars struct {
	Target   string // {target}: the device's name
	Instance string // {instance}: the table row's instance name
	Alias    string // {alias}: the row's alias (ifAlias), from the device
	Key      string // {key}: the RRD file's key
}

// Bounds of a template, so that an operator's file cannot make a graph
// unbounded: the elements, and each text. The values librrd fetches are
// bounded by Options.MaxDS (DEFs) and MaxBytes (cost.go).
const (
	maxTemplateElements = 64
	maxTemplateText     = 200
	maxRPNTokens        = 64
	maxVNameLen         = 32
	maxVarValue         = 100
)

// ErrBadTemplate is wrapped by the errors of NewTemplate.
var ErrBadTemplate = errors.New("bad graph template")

// NewTemplate checks t and returns it: names, colors, RPN
// expressions (only the operators of rpnOps, every name defined before it
// is used, a stack that ends with one value), formats and the bounds
// above. Its errors wrap ErrBadTemplate and name the element by number
// (from 1) and kind.
func NewTemplate(t Template) (*Template, error) {
	out, _, err := buildTemplate(t)
	return out, err
}

// Where buildTemplate found a problem, other than at an element's index.
const (
	atTemplate = -1
	atTitle    = -2
	atVLabel   = -3
)

// buildTemplate is NewTemplate, also saying where the problem is: the
// element's index, or atTemplate, atTitle, atVLabel.
func buildTemplate(t Template) (*Template, int, error) {
	bad := func(at int, format string, args ...any) (*Template, int, error) {
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
	t.Elements = append([]Element(nil), t.Elements...)
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

// DS returns the data source of each DEF, in order: what Draw fetches.
func (t *Template) DS() []string {
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
func (t *Template) Fits(ds []string) bool {
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
