//go:build cgo

package graph

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// BenchmarkGraphWorstAccepted draws the most expensive graphs Draw still
// accepts, for files of 256 and 1,024 data sources: no ds= (the default
// selection fills the memory bound), the largest picture, over a day and
// over the longest range allowed. It reports the peak resident memory of
// the process during the render (VmHWM, reset just before through
// /proc/self/clear_refs) as peak-MiB, Draw's estimate of what librrd
// fetches as est-MiB, the data sources drawn, and the estimate for drawing
// every data source, as the daemon did before the bound, as all-ds-est-MiB.
//
//	go test -run '^$' -bench GraphWorstAccepted -benchtime 3x ./graph
func BenchmarkGraphWorstAccepted(b *testing.B) {
	testenv.ResetPeakRSS(b)
	for _, n := range []int{256, 1024} {
		b.Run(fmt.Sprintf("file-ds=%d", n), func(b *testing.B) {
			path, _ := widePath(b, n, 300*time.Second)
			end := time.Unix(t0, 0)
			for _, span := range []time.Duration{24 * time.Hour, 20 * 366 * 24 * time.Hour} {
				b.Run("span="+span.String(), func(b *testing.B) {
					o := Options{Start: end.Add(-span), End: end, Width: 2000, Height: 1000}
					benchGraphPeak(b, path, o)
				})
			}
		})
	}
}

func benchGraphPeak(b *testing.B, path string, o Options) {
	o.setDefaults(time.Now())
	root := rootOf(b, path)
	fi, err := root.Info(path)
	if err != nil {
		b.Fatal(err)
	}
	rras, err := root.ReadRRAs(path)
	if err != nil {
		b.Fatal(err)
	}
	ds, err := graphSelect(fi, rras, o)
	if err != nil {
		b.Fatal(err)
	}
	var peak int64
	for b.Loop() {
		testenv.ResetPeakRSS(b)
		img, err := o.Draw(root, path, fi)
		if err != nil || !bytes.HasPrefix(img, []byte("\x89PNG")) {
			b.Fatalf("graph: %v", err)
		}
		peak = max(peak, testenv.PeakRSS(b))
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
	b.ReportMetric(float64(graphCost(len(ds), fi, rras, o))/(1<<20), "est-MiB")
	b.ReportMetric(float64(len(ds)), "ds-drawn")
	b.ReportMetric(float64(graphCost(len(fi.DS), fi, rras, o))/(1<<20), "all-ds-est-MiB")
}
