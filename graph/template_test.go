package graph

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/rrd"
)

// parseBlock parses text, a "graph" line and its block, as the file
// "profiles.conf" whose first line is text's first.
func parseBlock(text string) (*Template, error) {
	var header SourceLine
	var block []SourceLine
	for i, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if header.Text == "" {
			header = SourceLine{i + 1, l}
			continue
		}
		block = append(block, SourceLine{i + 1, l})
	}
	return ParseTemplate("profiles.conf", header, block)
}

func parseOne(t *testing.T, text string) *Template {
	t.Helper()
	tmpl, err := parseBlock(text)
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

func TestParseGraphTemplate(t *testing.T) {
	tmpl := parseOne(t, `graph uplink
  title  {target} {instance} ({alias})
  vlabel bits/s
  lower  0
  base   1024
  def    a in MAX
  cdef   b a,8,*
  vdef   p b,95,PERCENT
  area   b 00FF0080 stack "stack: in"
  line   b 0000FF width=2.5 out   wide
  hrule  p FF0000 95th
  hrule  1e9 000000
  gprint p %6.2lf %sbit/s
  comment  a note`)
	want := []string{
		"--base", "1024", "--lower-limit", "0",
		"DEF:a=/r/sw\\:1.rrd:in:MAX", "CDEF:b=a,8,*", "VDEF:p=b,95,PERCENT",
		"AREA:b#00FF0080:stack\\: in:STACK", "LINE2.5:b#0000FF:out   wide", "HRULE:p#FF0000:95th",
		"HRULE:1000000000#000000", "GPRINT:p:%6.2lf %sbit/s", "COMMENT:a note",
	}
	c := tmpl.render("/r/sw:1.rrd", Options{Vars: Vars{Target: "sw1", Instance: "ge-1"}})
	if strings.Join(c.Args, "\n") != strings.Join(want, "\n") {
		t.Errorf("rendered\n%s\nwant\n%s", strings.Join(c.Args, "\n"), strings.Join(want, "\n"))
	}
	if c.Title != "sw1 ge-1" || c.VLabel != "bits/s" {
		t.Errorf("title %q vlabel %q; without an alias the title is \"sw1 ge-1\"", c.Title, c.VLabel)
	}
	if got := tmpl.DS(); len(got) != 1 || got[0] != "in" || !tmpl.Fits([]string{"out", "in"}) || tmpl.Fits([]string{"out"}) {
		t.Errorf("DS %v, or Fits wrong", got)
	}
}

// TestParseGraphTemplateErrorsNameFileAndLine: each bad line gives an
// error "profiles.conf:<its line>: graph t: ..." that says what is wrong.
func TestParseGraphTemplateErrorsNameFileAndLine(t *testing.T) {
	for _, c := range []struct {
		bad, why string
	}{
		{"def x /etc/passwd", "data source"},
		{"def x in AVERAGE:daemon=unix:/run/rrdcached.sock", "consolidation"},
		{"def x in AVERAGE step=1", "want"},
		{"def X in", "name"},
		{"def in in", "defined twice"},
		{"cdef y nosuch,8,*", "not defined"},
		{"cdef y in,8", "leaves 2 values"},
		{"cdef y in,+", "needs 2 values"},
		{"cdef y in,86400,TREND", "not a number, a name or an operator"},
		{"cdef y 1,2,+", "names no"},
		{"cdef y " + strings.Repeat("in,", 70) + "in", "at most 64"},
		{"vdef y in,PERCENT", "takes a percentile"},
		{"vdef y in,101,PERCENT", "0 to 100"},
		{"vdef y in,5,MAXIMUM", "takes no argument"},
		{"vdef y in,SORT", "unknown function"},
		{"area in red", "color"},
		{"area nosuch 00FF00", "not a DEF or CDEF"},
		{"line in 00FF00 width=99", "width"},
		{"hrule in 00FF00", "not a VDEF"},
		{"hrule NaN 00FF00", "number"},
		{"gprint in %lf", "not a VDEF"},
		{"vdef m in,MAXIMUM\ngprint m %lf%lf", "one number conversion"},
		{"vdef m in,MAXIMUM\ngprint m %s%n", "bad conversion"},
		{"vdef m in,MAXIMUM\ngprint m %1000lf", "bad conversion"},
		{"vdef m in,MAXIMUM\ngprint m a:%lf", "no ':'"},
		{"comment {secret}", "unknown variable"},
		{`comment a\nb`, "backslash"},
		{`comment a\`, "backslash"},
		{`comment a\x`, "backslash"},
		{"comment \"unterminated", "quoted"},
		{"title " + strings.Repeat("x", 201), "longer than"},
		{"title a\ntitle b", "already set on line"},
		{"title\ta\ntitle\tb", "already set on line"},
		{"base 10", "base"},
		{"lower 5\nupper 1", "not below"},
		{"frobnicate 1", "unknown keyword"},
	} {
		t.Run(c.bad, func(t *testing.T) {
			lines := strings.Split(c.bad, "\n")
			text := "graph t\ndef in in\nline in 000000\n" + c.bad
			_, err := parseBlock(text)
			var ge *TemplateError
			if !errors.As(err, &ge) {
				t.Fatalf("error %v, want a *TemplateError", err)
			}
			wantLine := 3 + len(lines) // the bad block's last line
			if c.why == "not below" || c.why == "defined twice" {
				wantLine = 1 // the template's limits: its header; "in" twice: the def
				if c.why == "defined twice" {
					wantLine = 4
				}
			}
			if ge.File != "profiles.conf" || ge.Line != wantLine || !strings.Contains(ge.Msg, c.why) ||
				!strings.HasPrefix(err.Error(), "profiles.conf:") {
				t.Fatalf("error %q at line %d, want line %d saying %q", err, ge.Line, wantLine, c.why)
			}
		})
	}
}

func TestParseGraphTemplateBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("graph big\ndef in in\n")
	for range 100_000 {
		b.WriteString("line in 000000\n")
	}
	_, err := parseBlock(b.String())
	var ge *TemplateError
	if !errors.As(err, &ge) || ge.Line != 2+maxTemplateElements+8 || !strings.Contains(ge.Msg, "more than") {
		t.Fatalf("a block of 100,000 lines: %v, want an error at its %dth line", err, maxTemplateElements+8+1)
	}
	for _, text := range []string{"graph Big\ndef in in\nline in 000000", "graph nodraw\ndef in in", "graph\ndef in in"} {
		if _, err := parseBlock(text); err == nil || !strings.HasPrefix(err.Error(), "profiles.conf:1:") {
			t.Errorf("%q: %v, want an error naming line 1", text, err)
		}
	}
}

// TestTemplateGraphChecksTheFile: a template's data sources must be the
// file's, and its DEFs count against MaxDS.
func TestTemplateGraphChecksTheFile(t *testing.T) {
	fi := rrd.FileInfo{Last: t0, Step: 300 * time.Second, DS: []rrd.DSInfo{{Name: "c", Type: rrd.Counter}, {Name: "g", Type: rrd.Gauge}}}
	path := filepath.Join(t.TempDir(), "r.rrd")
	rec := &recorder{}
	traffic, _ := Builtin("traffic")
	if _, err := (Options{Template: traffic}).draw(rootOf(t, path), path, fi, rec.graph); !errors.Is(err, ErrNoDataSource) ||
		!strings.Contains(err.Error(), `"in" for graph template traffic`) {
		t.Errorf("traffic of a file without in: %v", err)
	}
	three := parseOne(t, "graph three\ndef a c\ndef b g\ndef x c\nline a 000000")
	if _, err := (Options{Template: three, MaxDS: 2}).draw(rootOf(t, path), path, fi, rec.graph); !errors.Is(err, ErrTooLarge) {
		t.Errorf("3 DEFs with MaxDS 2: %v", err)
	}
	if _, err := (Options{Template: three, MaxDS: 3}).draw(rootOf(t, path), path, fi, rec.graph); err != nil {
		t.Errorf("3 DEFs with MaxDS 3: %v", err)
	}
	// Each DEF fetches the whole file: 3 DEFs of 2 data sources over a
	// day of 300 s rows are 3 × 2 × 290 × 8 bytes, above 10,000.
	if _, err := (Options{Template: three, MaxBytes: 10_000}).draw(rootOf(t, path), path, fi, rec.graph); !errors.Is(err, ErrTooLarge) ||
		!strings.Contains(err.Error(), "graph template three's 3 DEFs") {
		t.Errorf("3 DEFs beyond MaxBytes: %v", err)
	}
	if _, err := (Options{Template: three, MaxBytes: 20_000}).draw(rootOf(t, path), path, fi, rec.graph); err != nil {
		t.Errorf("3 DEFs within MaxBytes: %v", err)
	}
}

// TestBuiltinTemplatesFit: each built-in names the data sources of the
// rows and profiles it is for (docs/profiles.md lists them).
func TestBuiltinTemplatesFit(t *testing.T) {
	ifRow := []string{"in", "out", "inpkt", "outpkt", "inerr", "outerr", "indisc", "outdisc", "speed", "oper"}
	host := []string{"uptime", "cpu_user", "cpu_system", "cpu_idle", "load1", "load5", "load15",
		"mem_total", "mem_avail", "mem_buffer", "mem_cached", "processes", "users"}
	for name, ds := range map[string][]string{"traffic": ifRow, "packets": ifRow, "errors": ifRow,
		"cpu": host, "load": host, "memory": host, "storage": {"units", "size", "used"}, "processor": {"load"}} {
		tmpl, ok := Builtin(name)
		if !ok || !tmpl.Fits(ds) {
			t.Errorf("built-in %s: found %v, fits %v", name, ok, ok && tmpl.Fits(ds))
		}
	}
	if n := len(Builtins()); n != 8 {
		t.Errorf("%d built-in templates, want 8", n)
	}
}

// FuzzParseTemplate: whatever an operator's file says, a template
// that parses renders to elements whose every DEF names the key's file (as
// many DEFs as DS reports), whose texts cannot add a field (a colon of a
// text is escaped), and that hold no control character, with hostile
// variables too.
func FuzzParseTemplate(f *testing.F) {
	f.Add(builtinGraphText[strings.Index(builtinGraphText, "graph traffic"):strings.Index(builtinGraphText, "graph packets")])
	f.Add("graph x\ndef a in\narea a 00FF00 stack a:b\ncomment c:DEF:z=/etc/passwd:in:AVERAGE\nline a 000000 width=2 {alias}")
	f.Add("graph y\ndef a in MAX\nvdef p a,95,PERCENT\nline a 000000\nhrule p FF0000 p\\l\ngprint p %6.2lf%s")
	const path = "/rrd/dir:x/k.rrd"
	f.Fuzz(func(t *testing.T, text string) {
		if strings.TrimSpace(text) == "" {
			return // no "graph" line to name
		}
		tmpl, err := parseBlock(text)
		if err != nil {
			var ge *TemplateError
			if !errors.As(err, &ge) || ge.File != "profiles.conf" || ge.Line < 1 {
				t.Fatalf("error %v is not a TemplateError naming the file and a line", err)
			}
			return
		}
		vars := Vars{Target: "t:1", Instance: "i\\:2", Alias: "a:DEF:z=/x:in:AVERAGE\n\\", Key: "k"}
		c := tmpl.render(path, Options{Vars: vars})
		elems := c.Args[len(c.Args)-len(tmpl.Elements):]
		defs := 0
		for i, a := range elems {
			e := tmpl.Elements[i]
			for _, r := range a {
				if r < ' ' || r == 0x7f {
					t.Fatalf("element %q holds a control character", a)
				}
			}
			fields := splitUnescaped(a)
			max := map[ElementKind]int{Def: 4, CDef: 2, VDef: 2, GPrint: 3, Comment: 2, Area: 4, Line: 4, HRule: 3}[e.Kind]
			if len(fields) > max || (e.Kind == Area || e.Kind == Line) && len(fields) == 4 && fields[3] != "STACK" {
				t.Fatalf("element %q has fields %q: a text added one", a, fields)
			}
			if e.Kind == Def {
				defs++
				if want := "DEF:" + e.VName + "=" + escapeColons(path) + ":" + e.DS + ":" + e.CF; a != want {
					t.Fatalf("DEF %q, want %q", a, want)
				}
			} else if strings.Contains(a, "=/") && e.Kind != Comment && e.Kind != Area && e.Kind != Line && e.Kind != HRule {
				t.Fatalf("element %q names a path", a)
			}
		}
		if defs != len(tmpl.DS()) || defs > maxTemplateElements {
			t.Fatalf("%d DEFs rendered, DS says %d", defs, len(tmpl.DS()))
		}
	})
}

// splitUnescaped splits an element at its colons not escaped as "\:".
func splitUnescaped(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && s[i+1] == ':' {
			i++
			continue
		}
		if s[i] == ':' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// TestLoadGraphIsLabelledLoad: the host profile's load graph says load on
// its axis, and draws plain numbers (0.7), not SI prefixes (700 m).
func TestLoadGraphIsLabelledLoad(t *testing.T) {
	tmpl, ok := Builtin("load")
	if !ok {
		t.Fatal("no built-in load template")
	}
	c := tmpl.render("/r/h1.rrd", Options{Vars: Vars{Target: "h1"}})
	if c.VLabel != "load" || !strings.Contains(strings.Join(c.Args, " "), "--units-exponent 0") {
		t.Errorf("load graph: vlabel %q, args %q; want load and --units-exponent 0", c.VLabel, c.Args)
	}
	if _, err := parseBlock("graph x\n  units kilo\n  def a a\n  line a FF0000"); err == nil || !strings.Contains(err.Error(), `units "kilo": want none`) {
		t.Errorf("units kilo: %v", err)
	}
}
