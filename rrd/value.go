package rrd

import (
	"math"
	"strconv"

	"github.com/spoold/spoold/spool"
)

// FormatFloat formats v exactly, as librrd's arguments take a value: a
// whole number of magnitude up to 2^53 as an integer (librrd takes only
// integers for DERIVE, where a negative rrdcached value is spooled as a
// gauge), anything else as its shortest round-trip representation; NaN
// and ±Inf become "U": RRD cannot use them.
func FormatFloat(v float64) string { return string(AppendFloat(nil, v)) }

// MaxExactInt is 2^53: every whole number up to it in magnitude is exact
// in a float64.
const MaxExactInt = 1 << 53

// AppendFloat appends v as FormatFloat formats it.
func AppendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return append(b, 'U')
	case v == math.Trunc(v) && math.Abs(v) <= MaxExactInt:
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// AppendValue appends a spooled value as an update takes it: a counter
// exactly, as an unsigned integer; a gauge as AppendFloat formats it; an
// unknown value as "U".
func AppendValue(b []byte, v spool.Value) []byte {
	switch v.Type {
	case spool.Counter:
		return strconv.AppendUint(b, v.Counter, 10)
	case spool.Gauge:
		return AppendFloat(b, v.Gauge)
	}
	return append(b, 'U')
}

// formatLimit formats a Min or Max for rrdcreate: "U" for NaN.
func formatLimit(v float64) string {
	if math.IsNaN(v) {
		return "U"
	}
	return FormatFloat(v)
}
