package admin

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/rrdwriter"
)

// TestPageAndStatusShowForwardAndShard: an instance polling shard 2/3 and
// forwarding to a peer that is down shows both on the page and in
// /status; one that does neither shows neither line.
func TestPageAndStatusShowForwardAndShard(t *testing.T) {
	fb := newFakeDaemon(okTarget("core-1"))
	fb.status.Shard = poller.ShardStatus{Shard: "2/3", Polled: 1, Targets: 3}
	fb.status.Writer.Forward = &rrdwriter.ForwardStats{
		Peer: "tcp:127.0.0.1:42217", LastError: "send BATCH to rrdcached tcp:127.0.0.1:42217: connection refused",
		LastErrorAt: time.Now(), Pending: 42, Sent: 10, Confirmed: 8, Failed: 3,
	}
	h := NewHandler(fb, testOptions())
	body := readBody(t, do(t, h, "GET", "/", ""))
	for _, want := range []string{
		"<dt>forward</dt><dd class=\"bad\">tcp:127.0.0.1:42217: down · 42 pending · 10 sent · 8 confirmed · 3 failed · last error: send BATCH",
		"<dt>shard</dt><dd>2/3: 1 of the 3 targets in the file</dd>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	var doc struct {
		Shard  poller.ShardStatus `json:"shard"`
		Writer struct {
			Forward struct {
				Peer    string `json:"peer"`
				Up      bool   `json:"up"`
				Pending int    `json:"pending"`
				LastOK  any    `json:"last_ok"`
			} `json:"forward"`
		} `json:"writer"`
	}
	if err := json.Unmarshal([]byte(readBody(t, do(t, h, "GET", "/status", ""))), &doc); err != nil {
		t.Fatal(err)
	}
	if f := doc.Writer.Forward; f.Peer != "tcp:127.0.0.1:42217" || f.Up || f.Pending != 42 || f.LastOK != nil || doc.Shard.Shard != "2/3" {
		t.Fatalf("/status shard %+v forward %+v", doc.Shard, f)
	}

	plain := NewHandler(newFakeDaemon(okTarget("core-1")), testOptions())
	body = readBody(t, do(t, plain, "GET", "/", ""))
	if strings.Contains(body, "<dt>forward</dt>") || strings.Contains(body, "<dt>shard</dt>") {
		t.Fatal("an instance without --forward and --shard shows them")
	}
	if st := readBody(t, do(t, plain, "GET", "/status", "")); strings.Contains(st, `"forward"`) {
		t.Fatal("/status of an instance without --forward has a forward member")
	}
}
