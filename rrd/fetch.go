package rrd

import "time"

// Fetched is rrd_fetch_r's answer: Values has a row per step from
// Start + Step, each with one value per DS.
type Fetched struct {
	Start, End time.Time
	Step       time.Duration
	DS         []string
	Values     []float64
}

// Fetch reads the values of the file at path consolidated with cf from
// start to end at step (rrd_fetch_r; librrd picks the archive).
func Fetch(path, cf string, start, end time.Time, step time.Duration) (Fetched, error) {
	return librrdFetch(path, cf, start, end, step)
}

// First returns the first time of the file's RRA rra, Unix seconds
// (rrd_first_r).
func First(path string, rra int) (int64, error) { return librrdFirst(path, rra) }

// FetchRows is the number of rows rrd_fetch returns for a fetch with
// consolidation function cf from start to end (Unix seconds) of a file
// with step and last update last: the finest archive of cf that covers the
// range, or else the one that covers the most of it (rrd_fetch_fn's choice
// with no step asked for, the most rows it picks). Without such archives
// it assumes one row per step.
func FetchRows(rras []RRADef, cf string, step time.Duration, last, start, end int64) int64 {
	base := max(int64(step/time.Second), 1)
	rowStep, bestPart := base, int64(-1)
	full := false
	for _, r := range rras {
		if r.CF != cf || r.PDPs == 0 {
			continue
		}
		s := base * int64(r.PDPs)
		calEnd := last - last%s
		calStart := calEnd - s*int64(r.Rows)
		switch {
		case calStart <= start:
			if !full || s < rowStep {
				rowStep, full = s, true
			}
		case !full:
			if match := end - start - (calStart - start); match > bestPart {
				rowStep, bestPart = s, match
			}
		}
	}
	return (end-start)/rowStep + 2
}
