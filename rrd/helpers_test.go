package rrd

import (
	"math"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	holdLockIfChild()
	goleak.VerifyTestMain(m)
}

// t0 is a step boundary (a multiple of 300 s).
const t0 = int64(1_700_000_100)

// testLayout has a COUNTER "c" and a GAUGE "g", step 300 s.
func testLayout() Layout {
	return Layout{
		Step: 300 * time.Second,
		DS: []DataSource{
			{Name: "c", Type: Counter, Heartbeat: 600 * time.Second, Min: 0, Max: math.NaN()},
			{Name: "g", Type: Gauge, Heartbeat: 600 * time.Second, Min: math.NaN(), Max: math.NaN()},
		},
		RRAs: DefaultRRAs(300 * time.Second),
	}
}
