package rrd

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

const t0 = 1700000000 // a step boundary for steps dividing 100

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
