package admin

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/spoold/spoold/rrdwriter"
)

func TestOrphansReportedOnTheirOwn(t *testing.T) {
	fb := newFakeDaemon(okTarget("core-1"))
	fb.status.WriterErrors = []rrdwriter.TargetError{
		{Key: "removed-b", Kind: rrdwriter.KindNoProfile, Err: "no profile"},
		{Key: "removed-a", Kind: rrdwriter.KindNoProfile, Err: "no profile"},
		{Key: "core-1", Kind: rrdwriter.KindNoSpace, Err: "no space left on device"},
	}
	h := NewHandler(fb, testOptions())
	type orphans struct {
		Count   int      `json:"count"`
		Targets []string `json:"targets"`
	}
	want := orphans{2, []string{"removed-a", "removed-b"}}
	check := func(what, body string) {
		t.Helper()
		var doc struct {
			Flushed *bool   `json:"flushed"`
			Orphans orphans `json:"orphans"`
		}
		if err := json.Unmarshal([]byte(body), &doc); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, body)
		}
		if doc.Orphans.Count != want.Count || strings.Join(doc.Orphans.Targets, ",") != strings.Join(want.Targets, ",") {
			t.Errorf("%s: orphans %+v, want %+v", what, doc.Orphans, want)
		}
		if what == "POST /flush" && (doc.Flushed == nil || !*doc.Flushed) {
			t.Errorf("POST /flush with orphans: flushed is not true:\n%s", body)
		}
	}
	resp := do(t, h, "POST", "/flush", "")
	if body := readBody(t, resp); resp.StatusCode != 200 {
		t.Errorf("POST /flush with orphans: %d %s", resp.StatusCode, body)
	} else {
		check("POST /flush", body)
	}
	check("GET /status", readBody(t, do(t, h, "GET", "/status", "")))
	if m := readBody(t, do(t, h, "GET", "/metrics", "")); !strings.Contains(m, "\nspoold_writer_orphan_targets 2\n") {
		t.Errorf("/metrics has no spoold_writer_orphan_targets 2")
	}
}
