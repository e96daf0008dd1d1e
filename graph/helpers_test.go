package graph

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/spoold/spoold/rrd"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// t0 is a step boundary (a multiple of 300 s).
const t0 = int64(1_700_000_100)

func nanF() float64 { return math.NaN() }

// wideLayout has n GAUGE data sources g0, g1, ... and the default archives.
func wideLayout(n int, step time.Duration, rras ...string) rrd.Layout {
	l := rrd.Layout{Step: step, RRAs: rras}
	if len(rras) == 0 {
		l.RRAs = rrd.DefaultRRAs(step)
	}
	for i := range n {
		l.DS = append(l.DS, rrd.DataSource{Name: fmt.Sprintf("g%d", i), Type: rrd.Gauge, Heartbeat: 2 * step, Min: nanF(), Max: nanF()})
	}
	return l
}

// infoOf is the header of a file of layout l last updated at last.
func infoOf(l rrd.Layout, last int64) rrd.FileInfo {
	fi := rrd.FileInfo{Last: last, Step: l.Step}
	for _, ds := range l.DS {
		fi.DS = append(fi.DS, rrd.DSInfo{Name: ds.Name, Type: ds.Type})
	}
	return fi
}

// rootOf is an rrd.Root on the directory of the file at path (made if
// missing), closed when tb ends.
func rootOf(tb testing.TB, path string) *rrd.Root {
	tb.Helper()
	r, err := rrd.MakeRoot(filepath.Dir(path))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

// recorder records the data sources of the DEFs of each graph it is asked
// to draw, and draws nothing.
type recorder struct{ drawn [][]string }

func (r *recorder) graph(path string, c rrd.GraphCall) ([]byte, error) {
	var ds []string
	for _, e := range c.Args {
		if def, ok := strings.CutPrefix(e, "DEF:"); ok {
			f := strings.Split(def, ":")
			ds = append(ds, f[len(f)-2])
		}
	}
	r.drawn = append(r.drawn, ds)
	return []byte("\x89PNG fake"), nil
}
