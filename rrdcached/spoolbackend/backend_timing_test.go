//go:build cgo

package spoolbackend

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

// BenchmarkBackendUpdate is the cost of one acknowledged UPDATE of 40
// values, as bench/rrdcached.sh sends them (12 per file, file after file):
// the check against the file, the append to the spool and the index
// ("backend"), against its limit, the spool's append of the same entries
// alone ("spool-append"), in the same run, interleaved A-B-B-A. The writer
// does not run: this is the acknowledgement's cost alone.
func BenchmarkBackendUpdate(b *testing.B) {
	for _, name := range []string{"backend", "spool-append", "spool-append", "backend"} {
		b.Run(name, func(b *testing.B) { benchmarkUpdate(b, name == "backend") })
	}
}

func benchmarkUpdate(b *testing.B, backend bool) {
	const files, perFile, nds = 100, 12, 40
	dir := b.TempDir()
	so := spool.DefaultOptions()
	so.Dir = filepath.Join(dir, "spool")
	sp, err := spool.Open(so)
	if err != nil {
		b.Fatal(err)
	}
	defer sp.Close()
	ix, err := shm.New(shm.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	o := rrdwriter.DefaultOptions()
	o.Dir = filepath.Join(dir, "rrd")
	w, err := rrdwriter.New(sp, ix, o)
	if err != nil {
		b.Fatal(err)
	}
	bo := DefaultOptions()
	bo.Dir = o.Dir
	be, err := New(w, sp, ix, bo)
	if err != nil {
		b.Fatal(err)
	}
	args := []string{"--start", fmt.Sprint(t0), "--step", "1"}
	ds := make([]rrd.DSInfo, nds)
	for j := range nds {
		args = append(args, fmt.Sprintf("DS:v%d:GAUGE:86400:U:U", j))
		ds[j] = rrd.DSInfo{Name: fmt.Sprintf("v%d", j), Type: rrd.Gauge}
	}
	args = append(args, "RRA:LAST:0.5:1:10")
	for i := range files {
		if out, err := exec.Command("rrdtool", append([]string{"create", filepath.Join(o.Dir, fmt.Sprintf("f%03d.rrd", i))}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("rrdtool create: %v\n%s", err, out)
		}
	}
	vals := strings.TrimSuffix(strings.Repeat("123:", nds), ":")
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		round, f, u := n/(files*perFile), n/perFile%files, n%perFile
		file, upd := fmt.Sprintf("f%03d.rrd", f), fmt.Sprintf("%d:%s", t0+1+int64(round*perFile+u), vals)
		if backend {
			if _, err := be.Update(ctx, file, []string{upd}); err != nil {
				b.Fatal(err)
			}
			continue
		}
		e, err := parseUpdate(upd, ds, time.Time{})
		if err != nil {
			b.Fatal(err)
		}
		e.Key = rrd.ProtocolKey(file)
		if _, _, err := sp.Append(&e); err != nil {
			b.Fatal(err)
		}
	}
}
