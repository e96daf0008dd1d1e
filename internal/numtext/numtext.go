// Package numtext formats numbers as RRD tools take them in text: librrd's
// arguments (rrdupdate values, rrdcreate limits) and rrdcached's protocol.
// It has no state and starts no goroutines.
package numtext

import (
	"math"
	"strconv"
)

// MaxExactInt is 2^53: every whole number up to it in magnitude is exact
// in a float64.
const MaxExactInt = 1 << 53

// AppendFloat appends v exactly, as librrd's arguments take a value: a
// whole number of magnitude up to 2^53 as an integer (librrd takes only
// integers for DERIVE, where a negative rrdcached value is spooled as a
// gauge), anything else as its shortest round-trip representation; NaN
// and ±Inf become "U": RRD cannot use them.
func AppendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return append(b, 'U')
	case v == math.Trunc(v) && math.Abs(v) <= MaxExactInt:
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
