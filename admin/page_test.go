package admin

import (
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/poller"
)

func TestPageListsTargetsWithEscapedGraphURLs(t *testing.T) {
	odd := "a b&c"
	script := `x"><img src=x onerror=alert(1)>`
	fb := newFakeDaemon(okTarget("core-1"), okTarget(odd), okTarget(script),
		NewTargetStatus(pollerFailing("edge-2", 7, 4), nil))
	h := NewHandler(fb, testOptions())
	resp := do(t, h, "GET", "/", "")
	body := readBody(t, resp)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'sha256-") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("CSP = %q", csp)
	}
	if strings.Contains(body, "<img src=x") {
		t.Errorf("a target name reached the page unescaped")
	}
	if !strings.Contains(body, `src="/graph/a%20b&amp;c.png?height=120&amp;start=-86400s&amp;width=480"`) {
		t.Errorf("graph URL of %q not escaped as expected", odd)
	}
	// Every target is listed, every graph URL resolves to that target.
	srcs := regexp.MustCompile(`<img src="([^"]*)"`).FindAllStringSubmatch(body, -1)
	if len(srcs) != 4 {
		t.Fatalf("%d graph images, want 4", len(srcs))
	}
	for _, name := range []string{"core-1", odd, script, "edge-2"} {
		if !strings.Contains(body, `<td><a href="`+html.EscapeString(DeviceURL(name))+`">`+html.EscapeString(name)+"</a></td>") {
			t.Errorf("target %q not listed", name)
		}
	}
	for _, m := range srcs {
		u := html.UnescapeString(m[1])
		if resp := do(t, h, "GET", u, ""); resp.StatusCode != 200 {
			t.Errorf("GET %s: %d", u, resp.StatusCode)
		}
	}
	got := map[string]bool{}
	for _, c := range fb.graphCalls() {
		got[c.target] = true
	}
	for _, name := range []string{"core-1", odd, script, "edge-2"} {
		if !got[name] {
			t.Errorf("graph URL on the page does not reach target %q (got %v)", name, got)
		}
	}
	for _, want := range []string{
		`<meta http-equiv="refresh" content="3600">`,
		"50.0%",               // loader progress
		"5m00s",               // loader ETA
		"3.0 MiB of 10.0 MiB", // index fill
		"9m00s",               // oldest pending
		"#42",                 // last cycle
		"request timeout",     // a failing target's problem
		"backoff",
		"spool-dir",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestPageNoGraphForUnservableName(t *testing.T) {
	body := readBody(t, do(t, NewHandler(newFakeDaemon(okTarget("a/b")), testOptions()), "GET", "/", ""))
	if strings.Contains(body, "<img ") || !strings.Contains(body, "<td>a/b</td>") {
		t.Errorf("a name the graph URL cannot carry got an image, or was not listed")
	}
}

func TestPageLimitsGraphs(t *testing.T) {
	var ts []TargetStatus
	for _, n := range []string{"t1", "t2", "t3", "t4", "t5"} {
		ts = append(ts, okTarget(n))
	}
	o := testOptions()
	o.PageGraphs = 2
	body := readBody(t, do(t, NewHandler(newFakeDaemon(ts...), o), "GET", "/", ""))
	if n := strings.Count(body, "<img "); n != 2 {
		t.Errorf("%d images, want 2", n)
	}
	if !strings.Contains(body, "3 more") || strings.Count(body, `<tr id="t-`) != 5 {
		t.Errorf("page does not list every target or say how many graphs are left out")
	}
}

func TestPageEmptyDaemon(t *testing.T) {
	fb := newFakeDaemon()
	fb.status = Status{Version: "dev"}
	body := readBody(t, do(t, NewHandler(fb, testOptions()), "GET", "/", ""))
	for _, want := range []string{"no cycle yet", "no targets configured", "not run yet"} {
		if !strings.Contains(body, want) {
			t.Errorf("empty page lacks %q", want)
		}
	}
}

func TestHumanFormats(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 850 * time.Millisecond: "850ms", 42 * time.Second: "42s",
		192 * time.Second: "3m12s", 5*time.Hour + 3*time.Minute: "5h03m", 52 * time.Hour: "2d04h",
	} {
		if got := humanDuration(d); got != want {
			t.Errorf("humanDuration(%v) = %q, want %q", d, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 3 << 30: "3.0 GiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestTargetNeedsAttention: a target whose discovery found rows beyond
// its bound on files, or a table without a row, answers its polls (health
// ok) but is listed under "Needs attention" with the reason, and /status
// says it.
func TestTargetNeedsAttention(t *testing.T) {
	overLimit := "the target made 100 new row files within the hour, its bound (--max-new-files-per-hour)"
	for _, tc := range []struct {
		name   string
		d      poller.DeviceStatus
		want   string // the attention
		status string // what /status says beside it
	}{
		{"renamer", poller.DeviceStatus{OverLimitRows: 8, OverLimit: overLimit}, "8 table rows not polled: " + overLimit, `"over_limit_rows": 8,`},
		{"routeros", poller.DeviceStatus{EmptyTables: []string{"if"}},
			"table if has no rows: the device answers none of its columns (spoold walk lists them)", `"empty_tables": [`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.d.Name, tc.d.Polls = tc.name, 3
			ts := NewTargetStatus(tc.d, nil)
			if ts.Health != HealthOK || ts.Attention != tc.want {
				t.Fatalf("status %+v", ts)
			}
			h := NewHandler(newFakeDaemon(okTarget("core-1"), ts), testOptions())
			body := readBody(t, do(t, h, "GET", "/", ""))
			section := body[strings.Index(body, "Needs attention"):]
			section = section[:strings.Index(section, "</table>")]
			if !strings.Contains(section, ">"+tc.name+"</a>") || !strings.Contains(section, html.EscapeString(tc.want)) || strings.Contains(section, "core-1") {
				t.Errorf("the page's attention table:\n%s", section)
			}
			st := readBody(t, do(t, h, "GET", "/status", ""))
			if !strings.Contains(st, tc.status) || !strings.Contains(st, `"attention": "`+tc.want+`"`) {
				t.Errorf("/status does not show the target's attention:\n%s", st)
			}
		})
	}
}
