package rrd

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// series builds n updates every dt seconds from start, the k-th value of
// each data source by val(k, ds).
func series(start, dt int64, n, ds int, val func(k, ds int) string) []string {
	out := make([]string, n)
	for k := range n {
		var b strings.Builder
		b.WriteString(strconv.FormatInt(start+int64(k)*dt, 10))
		for d := range ds {
			b.WriteString(":" + val(k, d))
		}
		out[k] = b.String()
	}
	return out
}

var allRRAs = []string{
	"RRA:AVERAGE:0.5:1:20", "RRA:MIN:0.5:1:20", "RRA:MAX:0.5:1:20", "RRA:LAST:0.5:1:20",
	"RRA:AVERAGE:0.5:3:10", "RRA:MIN:0.3:4:10", "RRA:MAX:0.7:6:8", "RRA:LAST:0.5:5:8",
	"RRA:AVERAGE:0:12:5", "RRA:MAX:0.99:288:3",
}

// TestNativeMatchesLibrrd: for every data source type, the same updates
// through librrd and the native path give the same file, batch by batch.
func TestNativeMatchesLibrrd(t *testing.T) {
	type tc struct {
		ds    string
		step  int
		dt    int64
		val   func(k, d int) string
		batch int // updates a batch
	}
	gauge := func(k, d int) string { return strconv.FormatFloat(float64(k*7%13)*1.37-3.1+float64(d), 'g', -1, 64) }
	counter := func(k, d int) string { return strconv.Itoa(1000 + k*k*37 + d) }
	derive := func(k, d int) string { return strconv.Itoa((k%7-3)*1000 + k*11) }
	var cases []tc
	for _, ds := range []string{"GAUGE:600:U:U", "GAUGE:600:-2:5", "COUNTER:600:U:U", "COUNTER:600:0:50",
		"DERIVE:600:U:U", "DERIVE:600:-5:U", "ABSOLUTE:600:U:U", "DCOUNTER:600:U:U", "DDERIVE:600:U:U"} {
		val := gauge
		switch strings.SplitN(ds, ":", 2)[0] {
		case "COUNTER", "ABSOLUTE":
			val = counter
		case "DERIVE":
			val = derive
		}
		for _, dt := range []int64{60, 300, 299, 301, 777} {
			for _, batch := range []int{1, 7} {
				cases = append(cases, tc{ds, 300, dt, val, batch})
			}
		}
	}
	for _, c := range cases {
		name := fmt.Sprintf("%s/step=%d/dt=%d/batch=%d", c.ds, c.step, c.dt, c.batch)
		t.Run(name, func(t *testing.T) {
			defs := append([]string{"DS:a:" + c.ds, "DS:b:" + c.ds}, allRRAs...)
			tw := newTwin(t, t0, c.step, defs...)
			ups := series(t0+17, c.dt, 40, 2, c.val)
			for len(ups) > 0 {
				n := min(c.batch, len(ups))
				tw.batch(t, nil, ups[:n]...)
				ups = ups[n:]
			}
		})
	}
}

// TestNativeScenarios: the cases librrd's arithmetic turns on, each
// through librrd and the native path.
func TestNativeScenarios(t *testing.T) {
	type tc struct {
		name     string
		step     int
		start    int64
		defs     []string
		template []string
		batches  [][]string
	}
	rras := []string{"RRA:AVERAGE:0.5:1:5", "RRA:MAX:0.5:2:4", "RRA:MIN:0.2:3:3", "RRA:LAST:0.9:7:2", "RRA:AVERAGE:0.1:288:2"}
	with := func(ds ...string) []string { return append(ds, rras...) }
	cases := []tc{
		{name: "heartbeat gap", step: 60, start: t0, defs: with("DS:a:GAUGE:90:U:U", "DS:b:COUNTER:90:U:U"),
			batches: [][]string{{fmt.Sprint(t0+30, ":1:100"), fmt.Sprint(t0+80, ":2:200")}, {fmt.Sprint(t0+200, ":3:300")}, {fmt.Sprint(t0+250, ":4:400"), fmt.Sprint(t0+2000, ":5:500")}}},
		{name: "unknowns", step: 60, start: t0, defs: with("DS:a:GAUGE:120:U:U", "DS:b:DERIVE:120:U:U"),
			batches: [][]string{series(t0+10, 20, 30, 2, func(k, d int) string {
				if k%3 == d || k > 20 && k < 26 {
					return "U"
				}
				return strconv.Itoa(k * (d + 1))
			})}},
		{name: "counter wrap 32 bit", step: 60, start: t0, defs: with("DS:a:COUNTER:120:U:U"),
			batches: [][]string{{fmt.Sprint(t0+60, ":4294967000"), fmt.Sprint(t0+120, ":200"), fmt.Sprint(t0+180, ":4294967295"), fmt.Sprint(t0+240, ":0")}}},
		{name: "counter wrap 64 bit", step: 60, start: t0, defs: with("DS:a:COUNTER:120:U:U"),
			batches: [][]string{{fmt.Sprint(t0+60, ":18446744073709551000"), fmt.Sprint(t0+120, ":500"), fmt.Sprint(t0+180, ":18446744073709551615"), fmt.Sprint(t0+240, ":12")}}},
		{name: "counters above 2^53", step: 60, start: t0, defs: with("DS:a:COUNTER:120:U:U", "DS:b:DERIVE:120:U:U"),
			batches: [][]string{{fmt.Sprint(t0+60, ":9007199254740993:-9007199254740993"), fmt.Sprint(t0+120, ":9007199254741999:-9007199254741001"), fmt.Sprint(t0+180, ":123456789012345678901234567:-5"), fmt.Sprint(t0+240, ":123456789012345678901234999:-5")}}},
		{name: "derive signs", step: 60, start: t0, defs: with("DS:a:DERIVE:120:U:U"),
			batches: [][]string{{fmt.Sprint(t0+60, ":-5"), fmt.Sprint(t0+120, ":-5"), fmt.Sprint(t0+180, ":7"), fmt.Sprint(t0+240, ":-3"), fmt.Sprint(t0+300, ":-1"), fmt.Sprint(t0+360, ":-100")}}},
		{name: "dcounter reset", step: 60, start: t0, defs: with("DS:a:DCOUNTER:120:U:U", "DS:b:DDERIVE:120:U:U"),
			batches: [][]string{{fmt.Sprint(t0+60, ":10.5:10.5"), fmt.Sprint(t0+120, ":20.25:1.5e2"), fmt.Sprint(t0+180, ":3:-2.5"), fmt.Sprint(t0+240, ":-1:-1"), fmt.Sprint(t0+300, ":-4:1E-3"), fmt.Sprint(t0+360, ":-2:+7")}}},
		{name: "min max limits", step: 60, start: t0, defs: with("DS:a:GAUGE:120:0:10", "DS:b:COUNTER:120:1:2", "DS:c:ABSOLUTE:120:U:0.5", "DS:d:DERIVE:120:-1:U"),
			batches: [][]string{series(t0+7, 31, 20, 4, func(k, d int) string { return strconv.Itoa((k*k*13 + d*7) % 200) })}},
		{name: "inside a step and on its edge", step: 300, start: t0, defs: with("DS:a:GAUGE:600:U:U", "DS:b:ABSOLUTE:600:U:U"),
			batches: [][]string{{fmt.Sprint(t0+1, ":1:1"), fmt.Sprint(t0+2, ":2:2"), fmt.Sprint(t0+299, ":3:3")}, {fmt.Sprint(t0+300, ":4:4")}, {fmt.Sprint(t0+600, ":5:5"), fmt.Sprint(t0+601, ":6:6"), fmt.Sprint(t0+900, ":7:7"), fmt.Sprint(t0+1199, ":8:8"), fmt.Sprint(t0+1200, ":9:9")}}},
		{name: "sub-second times", step: 10, start: t0, defs: with("DS:a:GAUGE:20:U:U", "DS:b:COUNTER:20:U:U"),
			batches: [][]string{{fmt.Sprint(t0+1, ".250:1:10"), fmt.Sprint(t0+1, ".500:2:20"), fmt.Sprint(t0+9, ".999:3:30"), fmt.Sprint(t0+10, ".001:4:40")}, {fmt.Sprint(t0+21, ".123:5:50"), fmt.Sprint(t0+35, ":6:60"), fmt.Sprint(t0+35, ".500:7:70")}}},
		{name: "time equal to the last update", step: 60, start: t0, defs: with("DS:a:GAUGE:120:U:U"),
			batches: [][]string{{fmt.Sprint(t0+60, ":1"), fmt.Sprint(t0+90, ":2")}, {fmt.Sprint(t0+90, ":3")}, {fmt.Sprint(t0+120, ":4"), fmt.Sprint(t0+100, ":5"), fmt.Sprint(t0+180, ":6")}, {fmt.Sprint(t0, ":7")}}},
		{name: "sub-second time equal to the last", step: 60, start: t0, defs: with("DS:a:GAUGE:120:U:U"),
			batches: [][]string{{fmt.Sprint(t0+60, ".500:1")}, {fmt.Sprint(t0+60, ".500:2")}, {fmt.Sprint(t0+60, ".499:2")}, {fmt.Sprint(t0+60, ".501:3")}}},
		{name: "one batch spanning more steps than rows", step: 60, start: t0, defs: with("DS:a:GAUGE:100000:U:U", "DS:b:COUNTER:100000:U:U"),
			batches: [][]string{{fmt.Sprint(t0+30, ":1:1"), fmt.Sprint(t0+90, ":2:100"), fmt.Sprint(t0+60*1000+17, ":3:5000"), fmt.Sprint(t0+60*1003, ":4:6000")}, series(t0+60*1010, 47, 300, 2, func(k, d int) string { return strconv.Itoa(k * 1000 * (d + 1)) })}},
		{name: "start off a boundary", step: 300, start: t0 + 123, defs: with("DS:a:GAUGE:600:U:U"),
			batches: [][]string{series(t0+200, 170, 30, 1, func(k, d int) string { return strconv.Itoa(k) })}},
		{name: "compute", step: 60, start: t0, defs: with("DS:a:GAUGE:120:U:U", "DS:b:COUNTER:120:U:U",
			"DS:s:COMPUTE:a,b,+,2,*", "DS:c:COMPUTE:a,b,GT,a,b,IF", "DS:d:COMPUTE:a,UN,0,a,IF,b,MAX,10,-5,LIMIT",
			"DS:e:COMPUTE:a,b,ADDNAN,FLOOR,a,CEIL,MIN,ABS,SQRT", "DS:f:COMPUTE:a,b,MINNAN,UNKN,MAXNAN,INF,NEGINF,EXC,POP,MAXNAN",
			"DS:g:COMPUTE:a,b,LT,a,b,LE,+,a,b,GE,+,a,b,EQ,+", "DS:h:COMPUTE:a,b,NE,a,ISINF,+,DUP,*,a,-,b,/,s,+"),
			batches: [][]string{series(t0+20, 40, 20, 2, func(k, d int) string {
				if k%5 == 4 {
					return "U"
				}
				return strconv.Itoa(k*(d+3) + 100*d)
			})}},
		{name: "template", step: 60, start: t0, defs: with("DS:a:GAUGE:120:U:U", "DS:b:COUNTER:120:U:U", "DS:c:COMPUTE:a,b,+", "DS:d:DERIVE:120:U:U"),
			template: []string{"d", "a"},
			batches:  [][]string{series(t0+20, 40, 10, 2, func(k, d int) string { return strconv.Itoa(k * (d + 2)) })}},
		{name: "long values", step: 60, start: t0, defs: with("DS:a:GAUGE:120:U:U", "DS:b:COUNTER:120:U:U"),
			batches: [][]string{{fmt.Sprint(t0+60, ":1.00000000000000000000000000000000001:12345678901234567890123456789012"), fmt.Sprint(t0+120, ":12345.678e-2:12345678901234567890123456789099"), fmt.Sprint(t0+180, ":-.5:1"), fmt.Sprint(t0+240, ":7.:2"),
				fmt.Sprint(t0+300, ":1e400:3"), fmt.Sprint(t0+360, ":-1e400:4"), fmt.Sprint(t0+420, ":1e-400:5"), fmt.Sprint(t0+480, ":0.1e1000:6"), fmt.Sprint(t0+540, ":1e:7"), fmt.Sprint(t0+600, ":+2.5E+2:8")}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tw := newTwin(t, c.start, c.step, c.defs...)
			for _, b := range c.batches {
				tw.batch(t, c.template, b...)
			}
		})
	}
}
