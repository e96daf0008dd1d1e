// Package simtest serves spoold's simulated fleet (package simulate) to a
// test or benchmark, on a free port of 127.0.0.1, until it ends.
package simtest

import (
	"context"
	"testing"

	"github.com/spoold/spoold/simulate"
)

// Serve listens with options o on a free port of 127.0.0.1 and serves the
// fleet until the test ends; a failure to listen or to serve fails it.
func Serve(tb testing.TB, o simulate.Options) *simulate.Simulator {
	tb.Helper()
	o.Addr = "127.0.0.1:0"
	s, err := simulate.Listen(o, nil)
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(context.Background()) }()
	tb.Cleanup(func() {
		s.Close()
		if err := <-done; err != nil {
			tb.Errorf("serve simulated fleet: %v", err)
		}
	})
	return s
}
