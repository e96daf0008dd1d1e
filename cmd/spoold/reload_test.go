package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
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

// TestSIGHUPBehindAStuckReloadIsLoggedAndApplied: a reload that cannot
// finish made later SIGHUPs wait behind it with nothing logged. Now the
// stuck reload is logged while it runs, each SIGHUP that waits behind it
// is logged, and once it ends the files are read again for them.
func TestSIGHUPBehindAStuckReloadIsLoggedAndApplied(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 16)
	var logs logBuf
	d := &daemon{log: slog.New(slog.NewTextHandler(&logs, nil)), reloadWarn: 20 * time.Millisecond}
	d.loadFleet = func() (*fleet.Generation, error) {
		started <- struct{}{}
		<-release
		return nil, errors.New("test: no fleet")
	}
	sig := make(chan os.Signal)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.waitSignals(ctx, sig); close(done) }()
	defer func() { cancel(); <-done }()
	sig <- syscall.SIGHUP
	<-started
	sig <- syscall.SIGHUP
	for _, want := range []string{"SIGHUP while a reload still runs", "reload still running"} {
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(logs.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("no %q logged within 10s:\n%s", want, logs.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	close(release)
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatalf("the SIGHUP sent during the stuck reload made no reload after it:\n%s", logs.String())
	}
}
