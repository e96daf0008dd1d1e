package numtext

import (
	"math"
	"strconv"
	"testing"
)

// TestAppendFloat: whole numbers up to 2^53 as integers (DERIVE takes only
// those), other values exactly (they parse back to the same float64), and
// what RRD cannot hold as "U".
func TestAppendFloat(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", -3: "-3", 1 << 53: "9007199254740992", -(1 << 53): "-9007199254740992",
		1<<53 + 2: "9.007199254740994e+15", 0.1: "0.1", -2.5e-300: "-2.5e-300",
		math.NaN(): "U", math.Inf(1): "U", math.Inf(-1): "U",
	} {
		got := string(AppendFloat([]byte("x:"), v))
		if got != "x:"+want {
			t.Errorf("AppendFloat(%v) = %q, want %q", v, got, "x:"+want)
		}
		if want != "U" {
			if back, err := strconv.ParseFloat(want, 64); err != nil || back != v {
				t.Errorf("%q parses back as %v (%v), want %v", want, back, err, v)
			}
		}
	}
}
