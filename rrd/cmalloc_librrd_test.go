//go:build cgo

package rrd

import (
	"os"
	"testing"
)

// TestBoundCMalloc: the daemon bounds glibc's arenas, and says so; an operator who set one of glibc's malloc
// variables keeps glibc's parameters, and the start line names the one set.
func TestBoundCMalloc(t *testing.T) {
	for _, v := range cMallocEnv {
		if old, set := os.LookupEnv(v); set {
			os.Unsetenv(v)
			t.Cleanup(func() { os.Setenv(v, old) })
		}
	}
	got, err := BoundCMalloc()
	if want := "2 arenas"; err != nil || got != want {
		t.Fatalf("BoundCMalloc() = %q, %v; want %q", got, err, want)
	}
	for _, v := range cMallocEnv {
		t.Run(v, func(t *testing.T) {
			t.Setenv(v, "4")
			if got, err := BoundCMalloc(); err != nil || got != v+" set" {
				t.Fatalf("with %s set: BoundCMalloc() = %q, %v; want %q", v, got, err, v+" set")
			}
		})
	}
}
