package graph

import (
	"strconv"
	"strings"
	"unicode"

	"github.com/spoold/spoold/rrd"
)

// render formats t for the RRD file at path: every DEF names path, every
// text has its variables replaced and its colons escaped.
func (t *Template) render(path string, o Options) rrd.GraphCall {
	c := rrd.GraphCall{Start: o.Start, End: o.End, Width: o.Width, Height: o.Height, Title: o.Title,
		VLabel: expandVars(t.VLabel, o.Vars)}
	if t.Title != "" {
		c.Title = expandVars(t.Title, o.Vars)
	}
	if t.Base != 1000 {
		c.Args = append(c.Args, "--base", strconv.Itoa(t.Base))
	}
	if t.PlainUnits {
		c.Args = append(c.Args, "--units-exponent", "0")
	}
	if t.Lower != nil {
		c.Args = append(c.Args, "--lower-limit", strconv.FormatFloat(*t.Lower, 'f', -1, 64))
	}
	if t.Upper != nil {
		c.Args = append(c.Args, "--upper-limit", strconv.FormatFloat(*t.Upper, 'f', -1, 64))
	}
	file := rrd.EscapeColons(path)
	for _, e := range t.Elements {
		c.Args = append(c.Args, e.format(file, o.Vars))
	}
	return c
}

func (e *Element) format(file string, v Vars) string {
	switch e.Kind {
	case Def:
		return "DEF:" + e.VName + "=" + file + ":" + e.DS + ":" + e.CF
	case CDef:
		return "CDEF:" + e.VName + "=" + e.RPN
	case VDef:
		return "VDEF:" + e.VName + "=" + e.RPN
	case GPrint:
		return "GPRINT:" + e.VName + ":" + e.Format
	case Comment:
		return "COMMENT:" + escapeColons(expandVars(e.Legend, v))
	}
	var b strings.Builder
	switch e.Kind {
	case Area:
		b.WriteString("AREA:" + e.VName)
	case Line:
		w := e.Width
		if w == 0 {
			w = 1
		}
		b.WriteString("LINE" + strconv.FormatFloat(w, 'f', -1, 64) + ":" + e.VName)
	case HRule:
		if e.VName != "" {
			b.WriteString("HRULE:" + e.VName)
		} else {
			b.WriteString("HRULE:" + strconv.FormatFloat(e.Value, 'f', -1, 64))
		}
	}
	b.WriteString("#" + e.Color)
	if e.Legend != "" || e.Stack {
		b.WriteString(":" + escapeColons(expandVars(e.Legend, v)))
	}
	if e.Stack {
		b.WriteString(":STACK")
	}
	return b.String()
}

// expandVars replaces the variables of s. A value comes from a device (an
// alias) or a name: its control characters and backslashes are dropped and
// it is cut to maxVarValue runes, so it stays text. Without an alias, a
// " ({alias})" of s is left out whole.
func expandVars(s string, v Vars) string {
	if !strings.Contains(s, "{") {
		return s
	}
	if cleanVar(v.Alias) == "" {
		s = strings.ReplaceAll(s, " ({alias})", "")
	}
	return strings.NewReplacer("{target}", cleanVar(v.Target), "{instance}", cleanVar(v.Instance),
		"{alias}", cleanVar(v.Alias), "{key}", cleanVar(v.Key)).Replace(s)
}

func cleanVar(s string) string {
	var b strings.Builder
	n := 0
	for _, r := range strings.ToValidUTF8(s, "?") {
		if unicode.IsControl(r) || r == '\\' {
			continue
		}
		if n++; n > maxVarValue {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// escapeColons is rrd.EscapeColons: texts as rrdgraph reads them.
func escapeColons(s string) string { return rrd.EscapeColons(s) }

// lineTemplate draws each of ds as a line in its own color, with the data
// source's name as its legend: Graph's drawing without a template.
func lineTemplate(ds []string) *Template {
	t := &Template{Name: "lines", Base: 1000}
	for i, name := range ds {
		v := "v" + strconv.Itoa(i)
		t.Elements = append(t.Elements,
			Element{Kind: Def, VName: v, DS: name, CF: "AVERAGE"},
			Element{Kind: Line, VName: v, Color: graphColors[i%len(graphColors)], Legend: name})
	}
	return t
}

var graphColors = []string{"0000FF", "00A000", "FF0000", "A000A0", "FF8000", "00A0A0", "808000", "404040"}
