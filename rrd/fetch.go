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
