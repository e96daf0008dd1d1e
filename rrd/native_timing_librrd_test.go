//go:build cgo

package rrd

import "testing"

// BenchmarkLibrrdUpdate is BenchmarkNativeUpdate through librrd
// (rrd_update_r): run both, interleaved, for the native path's cost
// against librrd's in one run:
//
//	go test -run '^$' -bench 'Update$' -count 6 ./rrd
func BenchmarkLibrrdUpdate(b *testing.B) {
	benchUpdates(b, func(r *Root) func(path string, rows []Sample) error {
		return func(path string, rows []Sample) error { return r.Update(path, nil, rows) }
	})
}
