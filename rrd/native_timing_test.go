package rrd

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkNativeUpdate: one file of 40 COUNTERs and 8 archives (the
// writer benchmark's), its 12 pending rows (an hour of 5-minute polls) in
// one batch, the file in the page cache: the native path's cost per file
// and flush, against librrd's (bench/writer.sh's writer_floor).
func BenchmarkNativeUpdate(b *testing.B) {
	benchUpdates(b, func(r *Root) func(path string, rows []Sample) error {
		c := NewHeaderCache(r, 4)
		b.Cleanup(func() { c.Close() })
		return func(path string, rows []Sample) error {
			_, err := c.Update(path, nil, rows)
			return err
		}
	})
}

// benchUpdates times the update made on the Root of the writer benchmark's
// file's directory, batch after batch.
func benchUpdates(b *testing.B, updater func(r *Root) func(path string, rows []Sample) error) {
	dir := b.TempDir()
	update := updater(testRoot(b, dir))
	path := filepath.Join(dir, "f.rrd")
	createRRD(b, path, t0-1, 300, benchDefs()...)
	rows := func(k int) []Sample {
		out := make([]Sample, 12)
		for v := range out {
			r := Sample{Time: t0 + int64(k*12+v)*300, Values: make([]string, 40)}
			for d := range r.Values {
				r.Values[d] = strconv.Itoa((d+1)*1000 + (k*12+v)*300*(d+1))
			}
			out[v] = r
		}
		return out
	}
	batches := make([][]Sample, 500)
	for k := range batches {
		batches[k] = rows(k)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i == len(batches) { // the batches start again on a file created anew
			// By rrdtool, as the daemon creates its files (through librrd),
			// not by writing the first one's bytes back: a file written in
			// one write(2) is cached in large folios (ext4 since Linux
			// 6.16), and each small pwrite of an update then walks every
			// block of its folio: a third of this benchmark's time.
			b.StopTimer()
			os.Remove(path)
			createRRD(b, path, t0-1, 300, benchDefs()...)
			i = 0
			b.StartTimer()
		}
		if err := update(path, batches[i]); err != nil {
			b.Fatal(err)
		}
	}
}

// benchDefs are the writer benchmark's definitions: 40 COUNTERs, 8
// archives.
func benchDefs() []string {
	defs := []string{}
	for d := range 40 {
		defs = append(defs, fmt.Sprintf("DS:ds%02d:COUNTER:600:0:U", d))
	}
	return append(defs, "RRA:AVERAGE:0.5:1:2016", "RRA:MAX:0.5:1:2016", "RRA:AVERAGE:0.5:6:1488", "RRA:MAX:0.5:6:1488",
		"RRA:AVERAGE:0.5:24:1464", "RRA:MAX:0.5:24:1464", "RRA:AVERAGE:0.5:288:1825", "RRA:MAX:0.5:288:1825")
}

// BenchmarkNativeArithmetic: the arithmetic of BenchmarkNativeUpdate's
// batch (12 rows of 40 COUNTERs, 8 archives) on a live head in memory,
// without the file's reads and writes.
func BenchmarkNativeArithmetic(b *testing.B) {
	path := filepath.Join(b.TempDir(), "f.rrd")
	createRRD(b, path, t0-1, 300, benchDefs()...)
	raw, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	h, _, err := ParseHeader(raw)
	if err != nil {
		b.Fatal(err)
	}
	p, err := newPlan(h)
	if err != nil {
		b.Fatal(err)
	}
	off, n := h.LiveRange()
	head := make([]byte, n)
	s := newStepper(h, p)
	vals := make([][]string, 12)
	for v := range vals {
		for d := range 40 {
			vals[v] = append(vals[v], strconv.Itoa((d+1)*1000+v*300*(d+1)))
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		copy(head, raw[off:off+n])
		s.reset(head)
		for v := range vals {
			copy(s.vals, vals[v])
			if refused, err := s.apply(t0+int64(v)*300, 0); refused || err != nil {
				b.Fatal(refused, err)
			}
		}
	}
}
