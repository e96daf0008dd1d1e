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
