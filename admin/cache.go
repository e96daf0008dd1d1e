package admin

import (
	"sync"
	"time"
)

// cache keeps one rendering (a response body, or the gathered metric
// families) for up to maxAge, so that many clients polling /status or
// /metrics cost one rendering per maxAge: with a thousand targets the
// status document is about half a megabyte of JSON, and rendering it per
// request under concurrent load took CPU time and garbage-collector work
// from the poll cycle (BenchmarkAdminLoad in cmd/spoold). A rendering
// holds the lock, so concurrent requests wait for it and share it; a
// failed one is not kept. maxAge <= 0 renders every request.
type cache[T any] struct {
	maxAge time.Duration
	now    func() time.Time

	mu   sync.Mutex
	at   time.Time
	have bool
	v    T
}

// get returns the kept rendering if it is younger than maxAge, else
// render's.
func (c *cache[T]) get(render func() (T, error)) (T, error) {
	if c.maxAge <= 0 {
		return render()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := c.now(); !c.have || now.Sub(c.at) >= c.maxAge || now.Before(c.at) {
		v, err := render()
		if err != nil {
			return v, err
		}
		c.v, c.at, c.have = v, now, true
	}
	return c.v, nil
}

// reset drops the kept rendering (after a POST changed the state).
func (c *cache[T]) reset() {
	c.mu.Lock()
	c.have = false
	var zero T
	c.v = zero
	c.mu.Unlock()
}
