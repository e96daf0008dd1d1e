//go:build cgo

package graph

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/rrd"
)

// ifStep is the step of the interface files of these tests.
const ifStep = 60

// ifRowLayout is an interface row's file as the if-mib table writes it:
// the counters, speed and oper, a step of 60 s with one fine archive.
func ifRowLayout() rrd.Layout {
	p := rrd.Layout{Step: ifStep * time.Second, RRAs: []string{"RRA:AVERAGE:0.5:1:2000", "RRA:MAX:0.5:1:2000"}}
	for _, n := range []string{"in", "out", "inpkt", "outpkt", "inerr", "outerr", "indisc", "outdisc"} {
		p.DS = append(p.DS, rrd.DataSource{Name: n, Type: rrd.Counter, Heartbeat: 2 * ifStep * time.Second, Min: 0, Max: nanF()})
	}
	for _, n := range []string{"speed", "oper"} {
		p.DS = append(p.DS, rrd.DataSource{Name: n, Type: rrd.Gauge, Heartbeat: 2 * ifStep * time.Second, Min: 0, Max: nanF()})
	}
	return p
}

// hostProfile has the host profile's data sources the host templates draw.
func hostProfile() rrd.Layout {
	p := rrd.Layout{Step: ifStep * time.Second, RRAs: []string{"RRA:AVERAGE:0.5:1:2000"}}
	for _, n := range []string{"cpu_user", "cpu_system", "cpu_idle"} {
		p.DS = append(p.DS, rrd.DataSource{Name: n, Type: rrd.Counter, Heartbeat: 2 * ifStep * time.Second, Min: 0, Max: nanF()})
	}
	for _, n := range []string{"load1", "load5", "load15", "mem_total", "mem_avail", "mem_buffer", "mem_cached", "units", "size", "used", "load"} {
		p.DS = append(p.DS, rrd.DataSource{Name: n, Type: rrd.Gauge, Heartbeat: 2 * ifStep * time.Second, Min: 0, Max: nanF()})
	}
	return p
}

const ifRows = 400 // polls written

// writeRows creates the file of l at path and writes ifRows polls, one
// step apart from t0: counters grow by a varying amount per step (a rate
// of 1 + (i*7919 % 1000) per second for counter j scaled by j+1), gauges
// take i's value.
func writeRows(t *testing.T, path string, l rrd.Layout) {
	t.Helper()
	counters := make([]uint64, len(l.DS))
	rows := make([]rrd.Sample, ifRows)
	for i := range rows {
		rows[i].Time = t0 + int64(ifStep*i)
		for j, d := range l.DS {
			if d.Type == rrd.Counter {
				counters[j] += uint64(ifStep * (1 + (i*7919+j*104729)%1000) * (j + 1))
				rows[i].Values = append(rows[i].Values, strconv.FormatUint(counters[j], 10))
			} else {
				rows[i].Values = append(rows[i].Values, strconv.Itoa(100+i%50))
			}
		}
	}
	createFile(t, path, l, t0, rows)
}

// keyFile is the path of key's file below dir.
func keyFile(dir, key string) string { return filepath.Join(dir, rrd.RRDPath(key)) }

// graphRange covers the polls and a little more on each side.
func graphRange() (time.Time, time.Time) {
	return time.Unix(t0-ifStep*10, 0), time.Unix(t0+ifStep*(ifRows+10), 0)
}

// TestBuiltinTemplatesDrawWithLibRRDAndRRDTool draws every built-in
// template from real files with librrd (through Draw), and draws
// the same arguments with the rrdtool command: both give a PNG of the
// asked size plus legend.
func TestBuiltinTemplatesDrawWithLibRRDAndRRDTool(t *testing.T) {
	dir := t.TempDir()
	writeRows(t, keyFile(dir, "sw1/ge-0_0_1"), ifRowLayout())
	writeRows(t, keyFile(dir, "host1"), hostProfile())
	start, end := graphRange()
	for _, tmpl := range Builtins() {
		t.Run(tmpl.Name, func(t *testing.T) {
			key, vars := "host1", Vars{Target: "host1", Key: "host1"}
			if !tmpl.Fits(hostProfile().DSNames()) {
				key, vars = "sw1/ge-0_0_1", Vars{Target: "sw1", Instance: "ge-0/0/1", Alias: "uplink: core", Key: "sw1/ge-0_0_1"}
			}
			o := Options{Template: tmpl, Vars: vars, Start: start, End: end, Width: 500, Height: 150}
			img, err := graphFile(t, keyFile(dir, key), o)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := png.DecodeConfig(bytes.NewReader(img))
			if err != nil || cfg.Width <= 500 || cfg.Height <= 150 {
				t.Fatalf("librrd's image: %v, %dx%d, want a PNG larger than the 500x150 drawing area", err, cfg.Width, cfg.Height)
			}
			o.setDefaults(time.Now())
			out := filepath.Join(t.TempDir(), "cli.png")
			testenv.RRDTool(t, tmpl.render(keyFile(dir, key), o).CLI(out)...)
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if c2, err := png.DecodeConfig(bytes.NewReader(b)); err != nil || c2 != cfg {
				t.Fatalf("rrdtool graph drew %+v (%v), librrd %+v", c2, err, cfg)
			}
		})
	}
}

// TestTrafficPercentileMatchesFetch: the traffic template's 95th
// percentile (VDEF PERCENTNAN of the bits) is the nearest-rank 95th
// percentile of the rates `rrdtool fetch` returns, times 8, as
// rrdgraph_rpn(1) defines it: the known values sorted, the one at
// round(0.95 × (n-1)).
func TestTrafficPercentileMatchesFetch(t *testing.T) {
	path := keyFile(t.TempDir(), "sw1/xe-1")
	writeRows(t, path, ifRowLayout())
	tmpl, _ := Builtin("traffic")
	start, end := graphRange()
	o := Options{Template: tmpl, Start: start, End: end}
	o.setDefaults(time.Now())
	args := append(tmpl.render(path, o).CLI("/dev/null"), "PRINT:in_95:%.6lf", "PRINT:out_95:%.6lf")
	lines := strings.Split(strings.TrimSpace(testenv.RRDTool(t, args...)), "\n")
	if len(lines) != 3 {
		t.Fatalf("rrdtool graph printed %q, want the size and two values", lines)
	}
	for i, ds := range []int{0, 1} { // in, out: the file's first two data sources
		got, err := strconv.ParseFloat(lines[1+i], 64)
		if err != nil {
			t.Fatal(err)
		}
		want := 8 * percentileNaN(fetchColumn(t, path, start.Unix(), end.Unix(), ds), 95)
		if math.Abs(got-want) > 1e-6*want {
			t.Errorf("data source %d: the template's 95th percentile is %f, from fetch %f", ds, got, want)
		}
		if want < 8*ifStep {
			t.Errorf("data source %d: percentile %f is not a rate of these polls", ds, want)
		}
	}
}

// fetchColumn returns column ds of `rrdtool fetch AVERAGE` at the step,
// NaN for unknowns.
func fetchColumn(t *testing.T, path string, start, end int64, ds int) []float64 {
	out := testenv.RRDTool(t, "fetch", path, "AVERAGE", "-r", strconv.Itoa(ifStep), "-s", fmt.Sprint(start), "-e", fmt.Sprint(end))
	var col []float64
	for _, line := range strings.Split(out, "\n") {
		_, vals, ok := strings.Cut(line, ":")
		if f := strings.Fields(vals); ok && len(f) > ds {
			v, err := strconv.ParseFloat(f[ds], 64)
			if err != nil {
				v = math.NaN()
			}
			col = append(col, v)
		}
	}
	if len(col) < ifRows {
		t.Fatalf("fetch gave %d rows, want at least %d", len(col), ifRows)
	}
	return col
}

func percentileNaN(vals []float64, p float64) float64 {
	var known []float64
	for _, v := range vals {
		if !math.IsNaN(v) {
			known = append(known, v)
		}
	}
	sort.Float64s(known)
	return known[int(math.Round(p*float64(len(known)-1)/100))]
}

// TestEveryRPNOperatorIsAcceptedByLibRRD builds a CDEF with each operator
// a template may use, and draws it with librrd: the whitelist holds only
// operators librrd knows, with the arity it has.
func TestEveryRPNOperatorIsAcceptedByLibRRD(t *testing.T) {
	path := keyFile(t.TempDir(), "sw1/ge-1")
	writeRows(t, path, ifRowLayout())
	start, end := graphRange()
	for op, a := range rpnOps {
		var toks []string
		if a.pop == 0 {
			toks = append(toks, "in", "POP")
		}
		for range a.pop {
			toks = append(toks, "in")
		}
		toks = append(toks, op)
		switch a.push {
		case 0:
			toks = append(toks, "in")
		case 2:
			toks = append(toks, "POP")
		}
		rpn := strings.Join(toks, ",")
		tmpl, err := NewTemplate(Template{Name: "op", Elements: []Element{
			{Kind: Def, VName: "in", DS: "in"}, {Kind: CDef, VName: "x", RPN: rpn},
			{Kind: Line, VName: "x", Color: "FF0000", Legend: op}}})
		if err != nil {
			t.Fatalf("%s: %v", rpn, err)
		}
		img, err := graphFile(t, path, Options{Template: tmpl, Start: start, End: end})
		if err != nil || !bytes.HasPrefix(img, []byte("\x89PNG")) {
			t.Errorf("CDEF %s: %v", rpn, err)
		}
	}
}

// TestHostileTemplateReadsOnlyTheKeysFile draws, with librrd and with
// rrdtool under strace, templates whose texts try to name another RRD file
// (a DEF smuggled into a legend, a comment, a title, an alias): the graph
// draws, and the only RRD file opened is the key's.
func TestHostileTemplateReadsOnlyTheKeysFile(t *testing.T) {
	dir := t.TempDir()
	own, other := keyFile(dir, "sw1/ge-2"), keyFile(dir, "secret")
	writeRows(t, own, ifRowLayout())
	writeRows(t, other, ifRowLayout())
	inject := ":DEF:z=" + escapeColons(other) + ":in:AVERAGE:LINE1:z#FF0000"
	text := "graph evil\n" +
		"title x" + inject + "\n" +
		"def in in\n" +
		"area in 00FF00 a" + inject + "\n" +
		"comment c" + inject + "\n" +
		"line in 0000FF {alias}\n"
	tmpl := parseOne(t, text)
	vars := Vars{Alias: "b" + inject + "\\n\\g\x00"}
	start, end := graphRange()
	o := Options{Template: tmpl, Vars: vars, Start: start, End: end}
	img, err := graphFile(t, own, o)
	if err != nil || !bytes.HasPrefix(img, []byte("\x89PNG")) {
		t.Fatalf("graph: %v", err)
	}
	o.setDefaults(time.Now())
	call := tmpl.render(own, o)
	defs := 0
	for _, a := range call.Args {
		if strings.HasPrefix(a, "DEF:") {
			defs++
		}
	}
	if defs != 1 {
		t.Fatalf("%d DEFs rendered, want 1: %q", defs, call.Args)
	}
	strace := testenv.LookPath(t, "strace", "it shows which files rrdtool opens")
	trace := filepath.Join(t.TempDir(), "trace")
	args := append([]string{"-f", "-e", "trace=open,openat", "-o", trace, "rrdtool"}, call.CLI("/dev/null")...)
	if out, err := exec.Command(strace, args...).CombinedOutput(); err != nil {
		t.Fatalf("strace rrdtool: %v\n%s", err, out)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), other) || !strings.Contains(string(b), own) {
		t.Fatalf("rrdtool opened another file than the key's:\n%s", b)
	}
}
