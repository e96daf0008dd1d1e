package rrdcached_test

import (
	"bufio"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spoold/spoold/rrdcached"
)

// heapInUse is the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// TestBatchErrorsBounded: connections that each open a BATCH and send
// thousands of bad lines without the closing "." make the server hold at
// most MaxBatchErrorBytes a connection; the command over it is refused,
// answered and counted, and the connection closed.
func TestBatchErrorsBounded(t *testing.T) {
	const conns, lines = 4, 20000
	s := startServer(t, nil)
	limit := rrdcached.DefaultOptions().MaxBatchErrorBytes
	// Each line's error is "Unknown command: XXX...", clipped to 512 bytes.
	bad := strings.Repeat("X", 600) + "\n"
	before := heapInUse()
	var wg sync.WaitGroup
	replies := make([]chan string, conns)
	for i := range conns {
		a := s.Addrs()[0]
		nc, err := net.Dial(a.Network(), a.String())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		r := bufio.NewReader(nc)
		if _, err := nc.Write([]byte("BATCH\n")); err != nil {
			t.Fatal(err)
		}
		if rep, err := rrdcached.ReadReply(r); err != nil || rep.Status != 0 {
			t.Fatalf("BATCH: %q, %v", rep, err)
		}
		replies[i] = make(chan string, 1)
		wg.Add(2)
		go func() { // the lines, until the server stops reading
			defer wg.Done()
			chunk := []byte(strings.Repeat(bad, 100))
			for range lines / 100 {
				if _, err := nc.Write(chunk); err != nil {
					return
				}
			}
		}()
		go func() { // a refusal, or nothing until the connection is closed
			defer wg.Done()
			l, _ := r.ReadString('\n')
			replies[i] <- l
		}()
	}
	refused := func() float64 {
		return s.metric(t, "spoold_rrdcached_refusals_total", "reason", rrdcached.RefuseBatchErrors)
	}
	waitLong(t, "every bad line read, or every connection refused", func() bool {
		return refused() == conns || s.metric(t, "spoold_rrdcached_commands_total", "command", "unknown") == conns*lines
	})
	held := heapInUse() - before
	t.Logf("heap held by %d connections in a BATCH of bad lines: %.1f MiB", conns, float64(held)/(1<<20))
	if bound := int64(conns*limit + 8<<20); held > bound {
		t.Errorf("%d connections in an endless BATCH hold %.1f MiB, want at most %.1f MiB", conns, float64(held)/(1<<20), float64(bound)/(1<<20))
	}
	want := fmt.Sprintf("-1 Batch too large: its error lines take more than %d bytes.\n", limit)
	timeout := time.After(10 * time.Second)
	for i := range conns {
		select {
		case got := <-replies[i]:
			if got != want {
				t.Errorf("connection %d: %q, want %q", i, got, want)
			}
		case <-timeout:
			t.Fatalf("connection %d: no answer to a BATCH over its error bytes", i)
		}
	}
	if n := refused(); n != conns {
		t.Errorf("%s refusals %v, want %d", rrdcached.RefuseBatchErrors, n, conns)
	}
	if got := s.dial(t, 0).do("PING"); got.Message != "PONG" {
		t.Errorf("a client after the refused batches: %q", got)
	}
	s.Close()
	wg.Wait()
}

// TestListenerShares: with the default limits, more idle TCP connections
// than the server takes leave the unix socket its share: a local writer is
// still served, and the TCP connections over their share are refused.
func TestListenerShares(t *testing.T) {
	const flood = 1030
	s := startServer(t, func(o *rrdcached.Options) {
		o.Listeners = append(o.Listeners, rrdcached.ListenerOptions{Spec: "tcp:127.0.0.1:0"})
	})
	share := rrdcached.DefaultOptions().MaxConns / 2
	addr := s.Addrs()[1].String()
	conns := make([]net.Conn, 0, flood)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range flood {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns = append(conns, c)
	}
	refused := 0
	for _, c := range conns[share:] {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		l, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			break
		}
		if l != fmt.Sprintf("-1 Too many connections: the limit of %d on this socket is reached.\n", share) {
			t.Fatalf("a TCP connection over the socket's share: %q", l)
		}
		refused++
	}
	if refused != flood-share {
		t.Errorf("%d TCP connections refused, want %d", refused, flood-share)
	}
	local := s.dial(t, 0)
	if got := local.do("PING"); got.Message != "PONG" {
		t.Fatalf("a unix client while %d TCP connections are open: %q", share, got)
	}
	if got := local.do("UPDATE a.rrd " + at(10) + ":1:2"); !got.OK() {
		t.Errorf("a local writer's UPDATE: %q", got)
	}
	if n := s.metric(t, "spoold_rrdcached_open_connections", "listener", "tcp:127.0.0.1:0"); n != float64(share) {
		t.Errorf("open TCP connections %v, want the socket's share %d", n, share)
	}
}

// TestFetchTooLarge: a FETCH whose values the backend says are over
// MaxFetchBytes is refused with the reason, counted, and the connection
// goes on.
func TestFetchTooLarge(t *testing.T) {
	s := startServer(t, func(o *rrdcached.Options) { o.MaxFetchBytes = 40 })
	seedFetch(s.backend) // 3 rows × 2 data sources: 48 bytes of values
	c := s.dial(t, 0)
	want := "FETCH too large: 3 rows of 2 data sources (48 bytes of values) over this range, more than the 40 bytes one FETCH may read; ask for a shorter range"
	for _, cmd := range []string{"FETCH", "FETCHBIN"} {
		if got := c.do(cmd + " a.rrd AVERAGE " + at(0) + " " + at(30)); got.Status != -1 || got.Message != want {
			t.Errorf("%s over the bound: %q, want -1 %s", cmd, got, want)
		}
	}
	if n := s.metric(t, "spoold_rrdcached_refusals_total", "reason", rrdcached.RefuseFetchTooLarge); n != 2 {
		t.Errorf("%s refusals %v, want 2", rrdcached.RefuseFetchTooLarge, n)
	}
	if got := c.do("PING"); got.Message != "PONG" {
		t.Errorf("PING after a refused FETCH: %q", got)
	}
}

// TestFetchesAtOnceBounded: with MaxFetches 2 and five clients fetching at
// once, two fetches run and three wait (counted), and each is answered
// once a slot is free; never more than two were in the backend.
func TestFetchesAtOnceBounded(t *testing.T) {
	const clients = 5
	s := startServer(t, func(o *rrdcached.Options) { o.MaxFetches = 2 })
	seedFetch(s.backend)
	gate := make(chan struct{})
	s.backend.mu.Lock()
	s.backend.fetchGate = gate
	s.backend.mu.Unlock()
	conns := make([]*client, clients)
	for i := range conns {
		conns[i] = s.dial(t, 0)
		conns[i].send("FETCH a.rrd AVERAGE " + at(0) + " " + at(30))
	}
	waitFor(t, "two fetches in the backend and three waiting", func() bool {
		now, _ := s.backend.fetching()
		return now == 2 && s.metric(t, "spoold_rrdcached_fetches_waiting") == clients-2
	})
	close(gate)
	for i, c := range conns {
		if got := c.reply(); got.Status != 9 || got.Message != "Success" {
			t.Errorf("client %d: %q", i, got)
		}
	}
	if _, most := s.backend.fetching(); most != 2 {
		t.Errorf("%d fetches in the backend at once, want at most 2", most)
	}
	if n := s.metric(t, "spoold_rrdcached_fetches_waiting"); n != 0 {
		t.Errorf("%v fetches still waiting", n)
	}
}
