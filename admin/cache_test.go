package admin

import (
	"sync/atomic"
	"testing"
	"time"
)

// countingDaemon counts the status snapshots the handler takes.
type countingDaemon struct {
	*fakeDaemon
	snapshots atomic.Int64
}

func (c *countingDaemon) Status() Status {
	c.snapshots.Add(1)
	return c.fakeDaemon.Status()
}

// TestStatusBodiesAreSharedForMaxAge: with StatusMaxAge set, repeated GETs
// of /status, /metrics and the page within the age take one snapshot each;
// a later GET, or any GET after a POST, takes a new one. With 0 every GET
// takes its own.
func TestStatusBodiesAreSharedForMaxAge(t *testing.T) {
	for _, age := range []time.Duration{0, time.Second} {
		cb := &countingDaemon{fakeDaemon: newFakeDaemon(okTarget("core-1"))}
		now := testNow
		o := testOptions()
		o.StatusMaxAge = age
		o.Now = func() time.Time { return now }
		h := NewHandler(cb, o)
		get := func(path string) string {
			resp := do(t, h, "GET", path, "")
			if resp.StatusCode != 200 {
				t.Fatalf("GET %s: %d", path, resp.StatusCode)
			}
			return readBody(t, resp)
		}
		want := func(n int64, after string) {
			t.Helper()
			if age == 0 {
				return
			}
			if got := cb.snapshots.Load(); got != n {
				t.Fatalf("max age %s: %d snapshots after %s, want %d", age, got, after, n)
			}
		}
		for _, path := range []string{"/status", "/metrics", "/"} {
			first := get(path)
			if again := get(path); again != first {
				t.Fatalf("max age %s: GET %s twice gave different bodies", age, path)
			}
		}
		want(3, "two GETs of each endpoint")
		now = now.Add(age)
		get("/status")
		want(4, "a GET once the age passed")
		if resp := do(t, h, "POST", "/flush", ""); resp.StatusCode != 200 {
			t.Fatalf("POST /flush: %d", resp.StatusCode)
		}
		get("/status")
		get("/metrics")
		want(6, "GETs after a POST")
		if age == 0 && cb.snapshots.Load() != 9 {
			t.Fatalf("max age 0: %d snapshots for 9 GETs", cb.snapshots.Load())
		}
	}
}
