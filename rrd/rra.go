package rrd

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// rraSpans are the resolutions and spans of DefaultRRAs: the classic MRTG
// archives (600 × 5 min, 700 × 30 min, 775 × 2 h, 797 × 1 day).
var rraSpans = []struct{ res, span time.Duration }{
	{5 * time.Minute, 600 * 5 * time.Minute},
	{30 * time.Minute, 700 * 30 * time.Minute},
	{2 * time.Hour, 775 * 2 * time.Hour},
	{24 * time.Hour, 797 * 24 * time.Hour},
}

// DefaultRRAs returns the archives an rrdtool user would pick: AVERAGE and
// MAX at 5 minutes for about 2 days, 30 minutes for about 2 weeks, 2 hours
// for about 2 months and 1 day for about 2 years. A resolution finer than
// step becomes one step per row. For step 300 s that is
// RRA:AVERAGE:0.5:1:600, ...:6:700, ...:24:775, ...:288:797 and the same for
// MAX. A step shorter than 5 minutes adds one AVERAGE RRA at the step's own
// resolution first (at most 4,000 rows). step must be at least a second.
func DefaultRRAs(step time.Duration) []string {
	const maxFineRows = 4000
	if step < time.Second {
		step = time.Second
	}
	var rras []string
	if step < rraSpans[0].res {
		// Polls faster than the finest RRA: keep every step too, for
		// about two days but at most maxFineRows rows (4,000 rows of a
		// 10 s step is 11 hours), so fresh graphs show the raw polls.
		rows := min(int64(rraSpans[0].span/step), maxFineRows)
		rras = append(rras, fmt.Sprintf("RRA:AVERAGE:0.5:1:%d", rows))
	}
	for _, cf := range []string{"AVERAGE", "MAX"} {
		for _, s := range rraSpans {
			pdp := max(int64(s.res/step), 1)
			rows := max(int64(s.span/(time.Duration(pdp)*step)), 1)
			rras = append(rras, fmt.Sprintf("RRA:%s:0.5:%d:%d", cf, pdp, rows))
		}
	}
	return rras
}

// CheckRRA reports whether def is an archive spoold creates files with:
// "RRA:<CF>:<xff>:<steps>:<rows>" with CF one of AVERAGE, MIN, MAX and
// LAST, xff in [0, 1), and whole numbers of steps and rows of at least 1.
// The error says which field is wrong.
func CheckRRA(def string) error {
	f := strings.Split(def, ":")
	if len(f) != 5 || f[0] != "RRA" {
		return fmt.Errorf("check RRA %q: want RRA:<AVERAGE|MIN|MAX|LAST>:<xff>:<steps>:<rows>", def)
	}
	switch f[1] {
	case "AVERAGE", "MIN", "MAX", "LAST":
	default:
		return fmt.Errorf("check RRA %q: consolidation function %q: want AVERAGE, MIN, MAX or LAST", def, f[1])
	}
	if x, err := strconv.ParseFloat(f[2], 64); err != nil || !(x >= 0 && x < 1) {
		return fmt.Errorf("check RRA %q: xff %q: want a number from 0 up to, not including, 1", def, f[2])
	}
	for _, n := range []struct{ name, v string }{{"steps", f[3]}, {"rows", f[4]}} {
		if v, err := strconv.ParseInt(n.v, 10, 64); err != nil || v < 1 || v > maxRRARows {
			return fmt.Errorf("check RRA %q: %s %q: want a whole number from 1 to %d", def, n.name, n.v, maxRRARows)
		}
	}
	return nil
}

// maxRRARows bounds an archive's steps and rows as CheckRRA takes them.
const maxRRARows = 100_000_000
