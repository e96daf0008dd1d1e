package statmetric

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

type stats struct {
	n    uint64
	g    float64
	bad  bool
	byOK map[string]float64
}

var table = Table[stats]{
	Counter("t_things_total", "Things.", func(s stats) uint64 { return s.n }),
	Gauge("t_level", "Level.", func(s stats) float64 { return s.g }),
	Vec("t_by_result", "By result.", prometheus.GaugeValue, []string{"result"}, func(s stats, emit Emit) {
		for k, v := range s.byOK {
			emit(v, k)
		}
		if s.bad {
			emit(1) // no label value: an invalid metric
		}
	}),
	// Two labels declared out of order, their values shared with t_by_result.
	Vec("t_state", "State.", prometheus.GaugeValue, []string{"result", "phase"}, func(s stats, emit Emit) {
		for k := range s.byOK {
			emit(1, k, "up")
			emit(0, k, "down")
		}
	}),
}

func TestCollectorReadsOneSnapshot(t *testing.T) {
	calls := 0
	c := table.Collector(func() stats {
		calls++
		return stats{n: 3, g: 0.5, byOK: map[string]float64{"ok": 2, "bad": 1}}
	})
	want := `# HELP t_by_result By result.
# TYPE t_by_result gauge
t_by_result{result="bad"} 1
t_by_result{result="ok"} 2
# HELP t_level Level.
# TYPE t_level gauge
t_level 0.5
# HELP t_state State.
# TYPE t_state gauge
t_state{phase="down",result="bad"} 0
t_state{phase="down",result="ok"} 0
t_state{phase="up",result="bad"} 1
t_state{phase="up",result="ok"} 1
# HELP t_things_total Things.
# TYPE t_things_total counter
t_things_total 3
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Errorf("%d stats() calls for one gathering, want 1", calls)
	}
	if n := testutil.CollectAndCount(c); n != 8 {
		t.Errorf("%d samples, want 8", n)
	}
	// The pedantic registry checks each sample's label pairs against its
	// description: its names, and a value for each.
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	if _, err := reg.Gather(); err != nil {
		t.Errorf("gather: %v", err)
	}
}

func TestWrongLabelCountIsAGatherError(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(table.Collector(func() stats { return stats{bad: true} }))
	if _, err := reg.Gather(); err == nil {
		t.Fatal("a sample without its label value gathered without an error")
	}
}
