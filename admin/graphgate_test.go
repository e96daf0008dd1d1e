package admin

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/spoold/spoold/graph"
)

// blockingDaemon's Graph signals entered and waits for release.
type blockingDaemon struct {
	*fakeDaemon
	entered chan struct{}
	release chan struct{}
}

func (b blockingDaemon) Graph(ctx context.Context, target string, o graph.Options) ([]byte, error) {
	b.entered <- struct{}{}
	<-b.release
	return b.fakeDaemon.Graph(ctx, target, o)
}

func TestGraphsAtOnceBounded(t *testing.T) {
	b := blockingDaemon{newFakeDaemon(okTarget("core-1")), make(chan struct{}, 4), make(chan struct{})}
	o := testOptions()
	o.GraphConcurrency, o.GraphQueue = 2, -1
	h := NewHandler(b, o)
	var wg sync.WaitGroup
	codes := make(chan int, 2)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes <- do(t, h, "GET", "/graph/core-1.png", "").StatusCode
		}()
		<-b.entered
	}
	resp := do(t, h, "GET", "/graph/core-1.png", "")
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != strconv.Itoa(graphRetryAfter) {
		t.Errorf("third graph with two in progress: %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	close(b.release)
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != 200 {
			t.Errorf("a graph in progress answered %d", c)
		}
	}
	if resp := do(t, h, "GET", "/graph/core-1.png", ""); resp.StatusCode != 200 {
		t.Errorf("graph after the others finished: %d", resp.StatusCode)
	}
}

func TestGraphQueueWaitsForATurn(t *testing.T) {
	b := blockingDaemon{newFakeDaemon(okTarget("core-1")), make(chan struct{}), make(chan struct{})}
	o := testOptions()
	o.GraphConcurrency, o.GraphQueue = 1, 1
	h := NewHandler(b, o)
	results := make(chan int, 2)
	go func() { results <- do(t, h, "GET", "/graph/core-1.png", "").StatusCode }()
	<-b.entered
	go func() { results <- do(t, h, "GET", "/graph/core-1.png", "").StatusCode }()
	// The second waits in the queue; it enters Graph once the first ends.
	b.release <- struct{}{}
	<-b.entered
	b.release <- struct{}{}
	for range 2 {
		if c := <-results; c != 200 {
			t.Errorf("queued graph answered %d", c)
		}
	}
}
