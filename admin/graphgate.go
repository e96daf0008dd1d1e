package admin

import (
	"context"
	"errors"
	"fmt"
)

// graphRetryAfter is the Retry-After, in seconds, of a graph refused for
// too many graphs at once.
const graphRetryAfter = 5

// errGraphsBusy says a graph found every turn taken and the queue full.
var errGraphsBusy = errors.New("too many graphs at once; try again shortly")

// graphGate bounds the graph requests in progress: slots of them at once,
// and queue more waiting for a slot; beyond both a request is refused at
// once, so a burst of graph requests neither piles up goroutines holding
// flushes nor waits unbounded behind librrd's one-at-a-time renderer.
type graphGate struct {
	slots chan struct{} // a token per request in progress
	queue chan struct{} // a token per request waiting for a slot
}

func newGraphGate(slots, queue int) graphGate {
	return graphGate{slots: make(chan struct{}, slots), queue: make(chan struct{}, queue)}
}

// enter takes a slot, waiting in the queue if it has room, until ctx ends.
// The caller calls release when its graph is done.
func (g graphGate) enter(ctx context.Context) (release func(), err error) {
	release = func() { <-g.slots }
	select {
	case g.slots <- struct{}{}:
		return release, nil
	default:
	}
	select {
	case g.queue <- struct{}{}:
	default:
		return nil, errGraphsBusy
	}
	defer func() { <-g.queue }()
	select {
	case g.slots <- struct{}{}:
		return release, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for a turn to graph: %w", ctx.Err())
	}
}
