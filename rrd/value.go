package rrd

import (
	"math"

	"github.com/spoold/spoold/internal/numtext"
)

// formatLimit formats a Min or Max for rrdcreate: "U" for NaN.
func formatLimit(v float64) string {
	if math.IsNaN(v) {
		return "U"
	}
	return string(numtext.AppendFloat(nil, v))
}
