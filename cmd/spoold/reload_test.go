package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/spoold/spoold/fleet"
)

// TestSIGTERMIsHandledWhileAReloadBlocks: a SIGHUP whose reload cannot
// finish (a targets file on a hung mount; before the regular-file check, a
// FIFO as a secret) must not keep SIGTERM waiting. More SIGHUPs meanwhile
// make one more reload after it, never a second one at the same time.
func TestSIGTERMIsHandledWhileAReloadBlocks(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 16)
	var running, most atomic.Int32
	d := &daemon{log: slog.New(slog.DiscardHandler)}
	d.loadFleet = func() (*fleet.Generation, error) {
		if n := running.Add(1); n > most.Load() {
			most.Store(n)
		}
		defer running.Add(-1)
		started <- struct{}{}
		<-release
		return nil, errors.New("test: no fleet")
	}
	sig := make(chan os.Signal) // unbuffered: a send returns once the loop took it
	done := make(chan struct{})
	go func() {
		d.waitSignals(context.Background(), sig)
		close(done)
	}()
	go func() {
		sig <- syscall.SIGHUP
		<-started
		for range 4 {
			sig <- syscall.SIGHUP
		}
		sig <- syscall.SIGTERM
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM not handled within 10s while a reload blocks")
	}
	close(release)
	if most.Load() > 1 {
		t.Fatalf("%d reloads ran at once", most.Load())
	}
}
