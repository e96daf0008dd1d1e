package rrd

import (
	"fmt"
	"strconv"
	"testing"
)

// fuzzBytes hands out the fuzzer's bytes as small choices (0 once they run
// out).
type fuzzBytes []byte

func (b *fuzzBytes) next(n int) int {
	if len(*b) == 0 || n <= 0 {
		return 0
	}
	v := int((*b)[0]) % n
	*b = (*b)[1:]
	return v
}

// fuzzFile builds rrdtool create's definitions from b: 1-3 data sources
// of every type, 1-4 archives of every kind with 1-288 PDPs a row.
func fuzzFile(b *fuzzBytes) (step int, defs []string) {
	step = []int{1, 5, 10, 60, 300, 7}[b.next(6)]
	types := []string{"GAUGE", "COUNTER", "DERIVE", "ABSOLUTE", "DCOUNTER", "DDERIVE"}
	limits := []string{"U:U", "0:U", "U:100", "-10:10", "1:1000"}
	nds := 1 + b.next(3)
	for i := range nds {
		hb := step * (1 + b.next(4))
		defs = append(defs, fmt.Sprintf("DS:d%d:%s:%d:%s", i, types[b.next(len(types))], hb, limits[b.next(len(limits))]))
	}
	if b.next(3) == 0 {
		defs = append(defs, "DS:c:COMPUTE:d0,2,*,d0,UN,0,d0,IF,MAX")
	}
	cfs := []string{"AVERAGE", "MIN", "MAX", "LAST"}
	pdps := []int{1, 2, 3, 5, 12, 288}
	for range 1 + b.next(4) {
		defs = append(defs, fmt.Sprintf("RRA:%s:%s:%d:%d", cfs[b.next(4)], []string{"0", "0.5", "0.25", "0.99"}[b.next(4)], pdps[b.next(len(pdps))], 1+b.next(20)))
	}
	return step, defs
}

// fuzzUpdates builds a stream of updates after start: steps from 0 (the
// same time again) to several heartbeats, some with milliseconds, values
// integers, decimals, unknowns, wraps.
func fuzzUpdates(b *fuzzBytes, start int64, step, nds int) []string {
	var out []string
	t, ms := start, 0
	for range 1 + b.next(40) {
		switch b.next(6) {
		case 0:
		case 1:
			t += int64(step * (1 + b.next(300)))
		default:
			t += int64(b.next(step*3 + 1))
		}
		ms = 0
		if b.next(3) == 0 {
			ms = b.next(1000)
		}
		s := strconv.FormatInt(t, 10)
		if ms > 0 {
			s += fmt.Sprintf(".%03d", ms)
		}
		for range nds {
			switch b.next(8) {
			case 0:
				s += ":U"
			case 1:
				s += ":" + strconv.Itoa(b.next(256)*b.next(256)-100)
			case 2:
				s += fmt.Sprintf(":%d.%d", b.next(100), b.next(1000))
			case 3:
				s += ":" + []string{"4294967295", "18446744073709551615", "0", "-0", "1e3", "2.5e-2"}[b.next(6)]
			default:
				s += ":" + strconv.Itoa(int(t-start)*(1+b.next(50)))
			}
		}
		out = append(out, s)
	}
	return out
}

// FuzzNativeUpdate: for any file rrdtool create makes of the native
// kinds and any stream of updates, split into batches, the native path
// and librrd (rrdtool update) give the same bytes and the same refusals.
func FuzzNativeUpdate(f *testing.F) {
	f.Add([]byte{3, 2, 1, 0, 0, 1, 1, 1, 0, 3, 2, 2, 2, 10, 5, 4, 3, 2, 1, 0, 9, 8, 7})
	f.Add([]byte{4, 0, 0, 2, 3, 1, 1, 3, 1, 4, 0, 1, 5, 19, 40, 1, 200, 2, 3, 0, 0, 0, 1, 7, 7, 7})
	f.Add([]byte{1, 2, 5, 1, 0, 3, 2, 4, 0, 2, 1, 0, 3, 3, 5, 6, 2, 250, 0, 1, 3, 2, 4, 1, 0, 0, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		b := fuzzBytes(data)
		step, defs := fuzzFile(&b)
		nds := 0
		for _, d := range defs {
			if len(d) > 3 && d[:3] == "DS:" && d[:4] != "DS:c" {
				nds++
			}
		}
		start := t0 + int64(b.next(step*2))
		ups := fuzzUpdates(&b, start, step, nds)
		tw := newTwin(t, start, step, defs...)
		for len(ups) > 0 {
			n := 1 + b.next(len(ups))
			tw.batchOrFallback(t, nil, ups[:n]...)
			ups = ups[n:]
		}
	})
}
