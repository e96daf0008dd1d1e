package admin

import (
	"sync"
	"time"
)

// bodyCache keeps one rendered response body for up to maxAge, so that
// many clients polling /status or /metrics cost one rendering per maxAge:
// with a thousand targets the status document is about half a megabyte of
// JSON, and rendering it per request under concurrent load took CPU time
// and garbage-collector work from the poll cycle (BenchmarkAdminLoad in
// cmd/spoold). A rendering holds the lock, so concurrent requests wait for
// it and share it. maxAge <= 0 renders every request.
type bodyCache struct {
	maxAge time.Duration
	now    func() time.Time

	mu   sync.Mutex
	at   time.Time
	body []byte
}

// get returns the cached body if it is younger than maxAge, else render's.
func (c *bodyCache) get(render func() []byte) []byte {
	if c.maxAge <= 0 {
		return render()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := c.now(); c.body == nil || now.Sub(c.at) >= c.maxAge || now.Before(c.at) {
		c.body, c.at = render(), now
	}
	return c.body
}

// reset drops the cached body (after a POST changed the state).
func (c *bodyCache) reset() {
	c.mu.Lock()
	c.body = nil
	c.mu.Unlock()
}
