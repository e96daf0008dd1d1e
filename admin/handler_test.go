package admin

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/graph"
	"github.com/spoold/spoold/loader"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/rrdwriter"
)

func pollerFailing(name string, failures, skip int) poller.DeviceStatus {
	return poller.DeviceStatus{Name: name, Address: "192.0.2.9:161", Profile: "host",
		LastPoll: testNow.Add(-time.Minute), LastError: "request timeout (after 1 retries)",
		LastErrorTime: testNow.Add(-time.Minute), ConsecutiveFailures: failures, SkipCycles: skip,
		Polls: 10, Failures: uint64(failures)}
}

func TestNewTargetStatusHealth(t *testing.T) {
	werr := &rrdwriter.TargetError{Key: "x", Kind: rrdwriter.KindNoSpace, Err: "no space left"}
	for _, c := range []struct {
		name string
		d    poller.DeviceStatus
		we   *rrdwriter.TargetError
		want Health
	}{
		{"never polled", poller.DeviceStatus{Name: "x"}, nil, HealthNew},
		{"answered", poller.DeviceStatus{Name: "x", Polls: 3}, nil, HealthOK},
		{"timeout", pollerFailing("x", 1, 0), nil, HealthFailing},
		{"in backoff", pollerFailing("x", 5, 2), nil, HealthBackoff},
		{"write error", poller.DeviceStatus{Name: "x", Polls: 3}, werr, HealthFailing},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := NewTargetStatus(c.d, c.we)
			if got.Health != c.want {
				t.Errorf("health = %s, want %s", got.Health, c.want)
			}
			if c.we != nil && (got.WriteError != c.we.Err || got.WriteErrorKind != "nospace") {
				t.Errorf("write error = %q (%s)", got.WriteError, got.WriteErrorKind)
			}
		})
	}
}

func TestStatusJSON(t *testing.T) {
	failing := NewTargetStatus(pollerFailing("edge-2", 1, 0), nil)
	failing.WriteError, failing.WriteErrorKind = "permission denied", "permission"
	fb := newFakeDaemon(okTarget("core-1"), failing)
	fb.status.WriterErrors = sampleStatus(failing).WriterErrors
	resp := do(t, NewHandler(fb, testOptions()), "GET", "/status", "")
	body := readBody(t, resp)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET /status: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatalf("status is not JSON: %v\n%s", err, body)
	}
	get := func(path ...string) any {
		var v any = doc
		for _, p := range path {
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%v: not an object at %s", path, p)
			}
			v = m[p]
		}
		return v
	}
	checks := []struct {
		path []string
		want any
	}{
		{[]string{"version"}, "1.2.3-test"},
		{[]string{"uptime_seconds"}, 26 * 3600.0},
		{[]string{"started"}, "2026-03-13T10:00:00Z"},
		{[]string{"now"}, "2026-03-14T12:00:00Z"},
		{[]string{"settings", "loader-files"}, "100"},
		{[]string{"loader", "running"}, true},
		{[]string{"loader", "progress"}, 0.5},
		{[]string{"loader", "eta_seconds"}, 300.0},
		{[]string{"loader", "finished"}, nil},
		{[]string{"loader", "params", "sleep_seconds"}, 0.05},
		{[]string{"loader", "params", "files"}, 100.0},
		{[]string{"index", "capacity_bytes"}, float64(10 << 20)},
		{[]string{"index", "fill_ratio"}, 0.3},
		{[]string{"writer", "oldest_pending_age_seconds"}, 540.0},
		{[]string{"writer", "errors", "permission"}, 3.0},
		{[]string{"last_cycle", "seq"}, 42.0},
		{[]string{"last_cycle", "duration_seconds"}, 12.0},
		{[]string{"poll_interval_seconds"}, 300.0},
		{[]string{"targets_by_health", "ok"}, 1.0},
		{[]string{"targets_by_health", "failing"}, 1.0},
	}
	for _, c := range checks {
		if got := get(c.path...); got != c.want {
			t.Errorf("%s = %v (%T), want %v", strings.Join(c.path, "."), got, got, c.want)
		}
	}
	targets := get("targets").([]any)
	if len(targets) != 2 {
		t.Fatalf("%d targets", len(targets))
	}
	tg := targets[1].(map[string]any)
	if tg["name"] != "edge-2" || tg["health"] != "failing" || tg["write_error"] != "permission denied" || tg["last_success"] != nil {
		t.Errorf("target = %v", tg)
	}
	if rtt := targets[0].(map[string]any)["rtt_seconds"]; rtt != 0.035 {
		t.Errorf("rtt_seconds = %v", rtt)
	}
	we := get("writer_errors").([]any)
	if len(we) != 1 || we[0].(map[string]any)["kind"] != "permission" {
		t.Errorf("writer_errors = %v", we)
	}
}

func TestStatusJSONBeforeFirstCycle(t *testing.T) {
	fb := newFakeDaemon()
	fb.status.LastCycle = nil
	fb.status.Settings = nil
	body := readBody(t, do(t, NewHandler(fb, testOptions()), "GET", "/status", ""))
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	if v, ok := doc["last_cycle"]; !ok || v != nil {
		t.Errorf("last_cycle = %v, want null", v)
	}
	if _, ok := doc["settings"].(map[string]any); !ok {
		t.Errorf("settings = %v, want {}", doc["settings"])
	}
	if ts, ok := doc["targets"].([]any); !ok || len(ts) != 0 {
		t.Errorf("targets = %v, want []", doc["targets"])
	}
}

func TestMethodsAndRoutes(t *testing.T) {
	h := NewHandler(newFakeDaemon(okTarget("a")), testOptions())
	for _, c := range []struct {
		method, path string
		code         int
		allow        string
	}{
		{"GET", "/", 200, ""},
		{"HEAD", "/status", 200, ""},
		{"POST", "/status", 405, "GET, HEAD"},
		{"DELETE", "/metrics", 405, "GET, HEAD"},
		{"PUT", "/graph/a.png", 405, "GET, HEAD"},
		{"GET", "/flush", 405, "POST"},
		{"GET", "/loader", 405, "POST"},
		{"GET", "/nothing", 404, ""},
		{"GET", "/status/x", 404, ""},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			resp := do(t, h, c.method, c.path, "")
			if resp.StatusCode != c.code {
				t.Errorf("status %d, want %d", resp.StatusCode, c.code)
			}
			if c.allow != "" && resp.Header.Get("Allow") != c.allow {
				t.Errorf("Allow = %q, want %q", resp.Header.Get("Allow"), c.allow)
			}
			if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("no nosniff header")
			}
		})
	}
}

func TestGraph(t *testing.T) {
	fb := newFakeDaemon(okTarget("core-1"), okTarget("a b&c"))
	h := NewHandler(fb, testOptions())
	resp := do(t, h, "GET", "/graph/core-1.png?ds=in,out&ds=err&start=-6h&width=800&height=300", "")
	body := readBody(t, resp)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("graph: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if !strings.HasPrefix(body, "\x89PNG\r\n\x1a\n") {
		t.Errorf("body is not a PNG")
	}
	calls := fb.graphCalls()
	if len(calls) != 1 {
		t.Fatalf("%d graph calls", len(calls))
	}
	o := calls[0].o
	if calls[0].target != "core-1" || strings.Join(o.DS, ",") != "in,out,err" || o.Width != 800 || o.Height != 300 ||
		!o.Start.Equal(testNow.Add(-6*time.Hour)) || !o.End.Equal(testNow) || o.Title != "core-1" {
		t.Errorf("graph call = %+v", calls[0])
	}

	resp = do(t, h, "GET", GraphURL("a b&c", nil), "")
	if resp.StatusCode != 200 {
		t.Errorf("graph of %q: %d", "a b&c", resp.StatusCode)
	}
	if calls := fb.graphCalls(); calls[len(calls)-1].target != "a b&c" {
		t.Errorf("graph of %q called with %q", "a b&c", calls[len(calls)-1].target)
	}

	resp = do(t, h, "GET", "/graph/nope.png", "")
	if body := readBody(t, resp); resp.StatusCode != 404 || !strings.Contains(body, `unknown target "nope"`) {
		t.Errorf("unknown target: %d %q", resp.StatusCode, body)
	}
}

func TestGraphRejectsPathLikeNames(t *testing.T) {
	fb := newFakeDaemon(okTarget("core-1"))
	h := NewHandler(fb, testOptions())
	for _, path := range []string{
		"/graph/..%2F..%2Fetc%2Fpasswd.png",
		"/graph/a%2Fb.png",
		"/graph/a/b.png",
		"/graph/%2E%2E.png",
		"/graph/..png",
		"/graph/.hidden.png",
		"/graph/.png",
		"/graph/a%5Cb.png",
		"/graph/a%00b.png",
		"/graph/a%0Ab.png",
		"/graph/%FF.png",
		"/graph/core-1",
		"/graph/core-1.svg",
		"/graph/" + strings.Repeat("x", 256) + ".png",
		"/graph/../../etc/passwd.png",
	} {
		t.Run(path, func(t *testing.T) {
			resp := do(t, h, "GET", path, "")
			switch resp.StatusCode {
			case 404, 301, 307, 308: // ServeMux redirects an unclean path to its clean form
			default:
				t.Errorf("status %d, want 404", resp.StatusCode)
			}
			if loc := resp.Header.Get("Location"); loc != "" && strings.HasPrefix(loc, "/graph/") {
				t.Errorf("redirected to a graph: %s", loc)
			}
		})
	}
	if calls := fb.graphCalls(); len(calls) != 0 {
		t.Errorf("Daemon.Graph called for path-like names: %+v", calls)
	}
}

func TestGraphQueryValidation(t *testing.T) {
	fb := newFakeDaemon(okTarget("core-1"))
	h := NewHandler(fb, testOptions())
	for _, c := range []struct {
		query, param string
	}{
		{"width=99", "width"},
		{"width=2001", "width"},
		{"width=abc", "width"},
		{"height=49", "height"},
		{"height=1001", "height"},
		{"width=600&width=700", "width"},
		{"start=yesterday", "start"},
		{"start=-6x", "start"},
		{"start=--6h", "start"},
		{"start=-0s", "start"},
		{"start=0", "start"},
		{"end=-1d&start=-1h", "start"},
		{"start=1700000000&end=1700000000", "start"},
		{"start=-100000w", "start"},
		{"ds=bad-name", "ds"},
		{"ds=" + strings.Repeat("a", 20), "ds"},
		{"ds=a,,b", "ds"},
		{"ds=" + strings.Repeat("a,", 33) + "a", "ds"},
		{"colour=red", "colour"},
		{"range=fortnight", "range"},
		{"range=day&range=week", "range"},
		{"range=week&start=-1d", "range"},
		{"range=week&end=0", "end"},
	} {
		t.Run(c.query, func(t *testing.T) {
			resp := do(t, h, "GET", "/graph/core-1.png?"+c.query, "")
			body := readBody(t, resp)
			if resp.StatusCode != 400 || !strings.Contains(body, "bad graph parameter "+c.param+"=") {
				t.Errorf("status %d, body %q; want 400 naming %s", resp.StatusCode, body, c.param)
			}
		})
	}
	if calls := fb.graphCalls(); len(calls) != 0 {
		t.Errorf("Daemon.Graph called for bad queries: %d", len(calls))
	}
}

func TestParseGraphQueryForms(t *testing.T) {
	for _, c := range []struct {
		query      string
		start, end time.Time
		w, h       int
	}{
		{"", testNow.Add(-24 * time.Hour), testNow, 600, 200},
		{"start=-2d", testNow.Add(-48 * time.Hour), testNow, 600, 200},
		{"start=-1w&end=-1d", testNow.Add(-7 * 24 * time.Hour), testNow.Add(-24 * time.Hour), 600, 200},
		{"start=-1h30m&end=now", testNow.Add(-90 * time.Minute), testNow, 600, 200},
		{"start=1700000000&end=1700086400&width=100&height=50", time.Unix(1700000000, 0), time.Unix(1700086400, 0), 100, 50},
		{"end=1700086400&width=2000&height=1000", time.Unix(1700000000, 0), time.Unix(1700086400, 0), 2000, 1000},
		{"range=day", testNow.Add(-24 * time.Hour), testNow, 600, 200},
		{"range=week", testNow.Add(-7 * 24 * time.Hour), testNow, 600, 200},
		{"range=month&end=-1d", testNow.Add(-32 * 24 * time.Hour), testNow.Add(-24 * time.Hour), 600, 200},
		{"range=year&end=1700086400", time.Unix(1700086400-366*86400, 0), time.Unix(1700086400, 0), 600, 200},
		{"range=week&start=", testNow.Add(-7 * 24 * time.Hour), testNow, 600, 200},
	} {
		t.Run(c.query, func(t *testing.T) {
			q, _ := url.ParseQuery(c.query)
			o, err := ParseGraphQuery(q, testNow)
			if err != nil {
				t.Fatal(err)
			}
			if !o.Start.Equal(c.start) || !o.End.Equal(c.end) || o.Width != c.w || o.Height != c.h {
				t.Errorf("got %v..%v %dx%d", o.Start, o.End, o.Width, o.Height)
			}
		})
	}
}

func TestGraphDaemonErrors(t *testing.T) {
	h := NewHandler(errGraphDaemon{newFakeDaemon(okTarget("core-1"))}, testOptions())
	resp := do(t, h, "GET", "/graph/core-1.png", "")
	// The error's text names files: it is logged, not shown.
	if body := readBody(t, resp); resp.StatusCode != 500 || strings.Contains(body, "boom") {
		t.Errorf("failing graph: %d %q; want 500 without the error's text", resp.StatusCode, body)
	}
}

type errGraphDaemon struct{ *fakeDaemon }

func (errGraphDaemon) Graph(ctx context.Context, target string, o graph.Options) ([]byte, error) {
	return nil, errBoom
}

func TestFlushAndAuth(t *testing.T) {
	fb := newFakeDaemon(okTarget("a"))
	o := testOptions()
	o.Token = "s3cret"
	h := NewHandler(fb, o)
	for _, c := range []struct {
		name   string
		header []string
		code   int
	}{
		{"no header", nil, 401},
		{"wrong token", []string{"Authorization", "Bearer nope"}, 401},
		{"prefix of token", []string{"Authorization", "Bearer s3cre"}, 401},
		{"basic scheme", []string{"Authorization", "Basic s3cret"}, 401},
		{"right token", []string{"Authorization", "Bearer s3cret"}, 200},
		{"scheme case", []string{"Authorization", "bearer s3cret"}, 200},
		{"cross-site browser", []string{"Authorization", "Bearer s3cret", "Sec-Fetch-Site", "cross-site"}, 403},
	} {
		t.Run(c.name, func(t *testing.T) {
			resp := do(t, h, "POST", "/flush", "", c.header...)
			if resp.StatusCode != c.code {
				t.Errorf("status %d, want %d", resp.StatusCode, c.code)
			}
			if c.code == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
		})
	}
	if fb.flushes != 2 {
		t.Errorf("%d flushes, want 2", fb.flushes)
	}
	for _, path := range []string{"/", "/status", "/metrics", "/graph/a.png"} {
		if resp := do(t, h, "GET", path, ""); resp.StatusCode != 200 {
			t.Errorf("GET %s with a token set: %d, want 200 (GETs stay open)", path, resp.StatusCode)
		}
	}
	resp := do(t, h, "POST", "/loader", "loader_files=5", "Content-Type", "application/x-www-form-urlencoded")
	if resp.StatusCode != 401 || fb.params.Files != 100 {
		t.Errorf("POST /loader without token: %d, files %d", resp.StatusCode, fb.params.Files)
	}

	fb.flushErr = errBoom
	resp = do(t, h, "POST", "/flush", "", "Authorization", "Bearer s3cret")
	if body := readBody(t, resp); resp.StatusCode != 500 || !strings.Contains(body, `"flushed": false`) {
		t.Errorf("failing flush: %d %s", resp.StatusCode, body)
	}
}

func TestLoaderParams(t *testing.T) {
	form := "application/x-www-form-urlencoded"
	for _, c := range []struct {
		name, ctype, body string
		code              int
		field             string
		want              loader.Params
	}{
		{"form files", form, "loader_files=1000", 200, "", loader.Params{Files: 1000, Sleep: 50 * time.Millisecond, Threshold: 200 * time.Millisecond}},
		{"form all", form, "loader_files=500&loader_sleep=10ms&loader_threshold=1s&loader_cpu=25%25", 200, "",
			loader.Params{Files: 500, Sleep: 10 * time.Millisecond, Threshold: time.Second, CPU: 0.25}},
		{"json mixed", "application/json", `{"loader_files": 300, "loader_sleep": "0s", "loader_cpu": 0.5}`, 200, "",
			loader.Params{Files: 300, Sleep: 0, Threshold: 200 * time.Millisecond, CPU: 0.5}},
		{"json charset", "application/json; charset=utf-8", `{"loader_threshold": "300ms"}`, 200, "",
			loader.Params{Files: 100, Sleep: 50 * time.Millisecond, Threshold: 300 * time.Millisecond}},
		{"files zero", form, "loader_files=0", 400, "loader_files", loader.Params{}},
		{"files text", form, "loader_files=many", 400, "loader_files", loader.Params{}},
		{"sleep bad", form, "loader_sleep=50", 400, "loader_sleep", loader.Params{}},
		{"sleep negative", form, "loader_sleep=-1s", 400, "loader_sleep", loader.Params{}},
		{"threshold zero", form, "loader_threshold=0s", 400, "loader_threshold", loader.Params{}},
		{"sleep an hour", form, "loader_sleep=1h", 400, "loader_sleep", loader.Params{}},
		{"sleep forever", "application/json", `{"loader_sleep": "2562047h"}`, 400, "loader_sleep", loader.Params{}},
		{"threshold a minute", form, "loader_threshold=1m", 400, "loader_threshold", loader.Params{}},
		{"cpu too much", form, "loader_cpu=150%25", 400, "loader_cpu", loader.Params{}},
		{"cpu text", "application/json", `{"loader_cpu": "lots"}`, 400, "loader_cpu", loader.Params{}},
		{"unknown field", form, "loader_speed=9", 400, "loader_speed", loader.Params{}},
		{"json bool", "application/json", `{"loader_files": true}`, 400, "loader_files", loader.Params{}},
		{"twice", form, "loader_files=1&loader_files=2", 400, "loader_files", loader.Params{}},
		{"json twice", "application/json", `{"loader_files": 1, "loader_files": 2}`, 400, "loader_files", loader.Params{}},
		{"json twice escaped", "application/json", `{"loader_cpu": "1%", "loader\u005fcpu": "2%"}`, 400, "loader_cpu", loader.Params{}},
		{"cpu minus zero", form, "loader_cpu=-0", 200, "", loader.DefaultParams()},
		{"cpu minus zero percent json", "application/json", `{"loader_cpu": "-0%"}`, 200, "", loader.DefaultParams()},
		{"cpu minus zero number json", "application/json", `{"loader_cpu": -0}`, 200, "", loader.DefaultParams()},
		{"cpu tiny", form, "loader_cpu=5e-324", 400, "loader_cpu", loader.Params{}},
		{"json trailing", "application/json", `{"loader_files": 1} {}`, 400, "", loader.Params{}},
		{"empty", form, "", 400, "", loader.Params{}},
		{"bad json", "application/json", `{"loader_files": `, 400, "", loader.Params{}},
		{"json array", "application/json", `[1]`, 400, "", loader.Params{}},
		{"xml", "text/xml", `<x/>`, 400, "", loader.Params{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fb := newFakeDaemon()
			resp := do(t, NewHandler(fb, testOptions()), "POST", "/loader", c.body, "Content-Type", c.ctype)
			body := readBody(t, resp)
			if resp.StatusCode != c.code {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.code, body)
			}
			var reply map[string]any
			if err := json.Unmarshal([]byte(body), &reply); err != nil {
				t.Fatalf("reply is not JSON: %s", body)
			}
			if c.code != 200 {
				if f, _ := reply["field"].(string); f != c.field || !strings.Contains(reply["error"].(string), c.field) {
					t.Errorf("reply %v, want field %q named", reply, c.field)
				}
				if fb.params != loader.DefaultParams() {
					t.Errorf("params changed by a bad request: %+v", fb.params)
				}
				return
			}
			if fb.params != c.want {
				t.Errorf("params = %+v, want %+v", fb.params, c.want)
			}
			want := replyOf(c.want)
			if reply["loader_files"] != float64(want.Files) || reply["loader_sleep"] != want.Sleep ||
				reply["loader_threshold"] != want.Threshold || reply["loader_cpu"] != want.CPU {
				t.Errorf("reply %v, want %+v", reply, want)
			}
		})
	}
}

func TestLoaderBodyLimitAndDaemonError(t *testing.T) {
	fb := newFakeDaemon()
	h := NewHandler(fb, testOptions())
	big := "loader_files=1&pad=" + strings.Repeat("x", maxBodyBytes)
	resp := do(t, h, "POST", "/loader", big, "Content-Type", "application/x-www-form-urlencoded")
	if resp.StatusCode != 413 {
		t.Errorf("oversized body: %d, want 413", resp.StatusCode)
	}
	fb.setErr = errBoom
	resp = do(t, h, "POST", "/loader", "loader_files=7", "Content-Type", "application/x-www-form-urlencoded")
	if resp.StatusCode != 500 {
		t.Errorf("daemon error: %d, want 500", resp.StatusCode)
	}
}

func TestProfilingIsOptInAndBehindTheToken(t *testing.T) {
	fb := newFakeDaemon(okTarget("a"))
	o := testOptions()
	if resp := do(t, NewHandler(fb, o), "GET", "/debug/pprof/heap?debug=1", ""); resp.StatusCode != 404 {
		t.Errorf("profiles without Profiling: %d, want 404", resp.StatusCode)
	}
	o.Profiling = true
	resp := do(t, NewHandler(fb, o), "GET", "/debug/pprof/heap?debug=1", "")
	if body := readBody(t, resp); resp.StatusCode != 200 || !strings.HasPrefix(body, "heap profile:") {
		t.Errorf("heap profile without a token set: %d %.40q", resp.StatusCode, body)
	}
	o.Token = "s3cret"
	h := NewHandler(fb, o)
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/profile?seconds=1", "/debug/pprof/cmdline", "/debug/pprof/symbol", "/debug/pprof/trace"} {
		if resp := do(t, h, "GET", path, "", "Authorization", "Bearer nope"); resp.StatusCode != 401 {
			t.Errorf("GET %s with a wrong token: %d, want 401", path, resp.StatusCode)
		}
	}
	resp = do(t, h, "GET", "/debug/pprof/goroutine?debug=1", "", "Authorization", "Bearer s3cret")
	if body := readBody(t, resp); resp.StatusCode != 200 || !strings.HasPrefix(body, "goroutine profile:") {
		t.Errorf("goroutine profile with the token: %d %.40q", resp.StatusCode, body)
	}
}
