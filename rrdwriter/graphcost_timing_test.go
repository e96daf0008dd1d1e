//go:build cgo

package rrdwriter

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/spoolgen"
	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

// BenchmarkGraphWorstAccepted draws the most expensive graphs Graph still
// accepts, for files of 256 and 1,024 data sources: no ds= (the default
// selection fills the memory bound), the largest picture, over a day and
// over the longest range allowed. It reports the peak resident memory of
// the process during the render (VmHWM, reset just before through
// /proc/self/clear_refs) as peak-MiB, Graph's estimate of what librrd
// fetches as est-MiB, the data sources drawn, and the estimate for drawing
// every data source, as the daemon did before the bound, as all-ds-est-MiB.
//
//	go test -run '^$' -bench GraphWorstAccepted -benchtime 3x ./rrdwriter
func BenchmarkGraphWorstAccepted(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		testenv.Missing(b, "cannot reset the peak RSS (VmHWM): %v", err)
	}
	for _, n := range []int{256, 1024} {
		b.Run(fmt.Sprintf("file-ds=%d", n), func(b *testing.B) {
			w, key := benchWideFile(b, n)
			end := time.Unix(t0, 0)
			for _, span := range []time.Duration{24 * time.Hour, 20 * 366 * 24 * time.Hour} {
				b.Run("span="+span.String(), func(b *testing.B) {
					o := GraphOptions{Start: end.Add(-span), End: end, Width: 2000, Height: 1000}
					benchGraphPeak(b, w, key, o)
				})
			}
		})
	}
}

func benchGraphPeak(b *testing.B, w *Writer, key string, o GraphOptions) {
	w.graphDefaults(&o)
	t := w.target(spool.KeyHash(key), key)
	rras, err := rrd.ReadRRAs(t.path)
	if err != nil {
		b.Fatal(err)
	}
	ds, err := graphSelect(t, rras, o)
	if err != nil {
		b.Fatal(err)
	}
	var peak int64
	for b.Loop() {
		if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
			b.Fatal(err)
		}
		img, err := w.Graph(context.Background(), key, o)
		if err != nil || !bytes.HasPrefix(img, []byte("\x89PNG")) {
			b.Fatalf("graph: %v", err)
		}
		peak = max(peak, testenv.PeakRSS(b))
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
	b.ReportMetric(float64(graphCost(len(ds), t.info, rras, o))/(1<<20), "est-MiB")
	b.ReportMetric(float64(len(ds)), "ds-drawn")
	b.ReportMetric(float64(graphCost(len(t.info.DS), t.info, rras, o))/(1<<20), "all-ds-est-MiB")
}

// benchWideFile returns a writer and the key of an RRD file with n data
// sources, the default archives and one update.
func benchWideFile(b *testing.B, n int) (*Writer, string) {
	p := wideProfile(n, 300*time.Second)
	spoolDir := filepath.Join(b.TempDir(), "spool")
	sp := spoolgen.OpenTest(b, spoolDir)
	ix, err := shm.New(shm.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	o := DefaultOptions()
	o.Dir, o.RRD = filepath.Join(b.TempDir(), "rrd"), LibRRD()
	o.Layout = func(string) (rrd.Layout, bool) { return p, true }
	w, err := New(sp, ix, o)
	if err != nil {
		b.Fatal(err)
	}
	ent := spool.Entry{Key: "wide", Time: t0}
	for _, ds := range p.DS {
		ent.Values = append(ent.Values, gauge(ds.Name, 1))
	}
	ref, err := sp.Write(&ent)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ix.Add(ref.Hash, ent.Key, ent.Time); err != nil {
		b.Fatal(err)
	}
	if err := w.FlushKey(context.Background(), ent.Key); err != nil {
		b.Fatal(err)
	}
	return w, ent.Key
}
