package admin

import (
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestGraphByKeyAndTemplate: /graph?key=&template= draws the key's template
// with its variables; a row key, an unknown template, a bad key or a
// template with ds are answered without or with the right Daemon call.
func TestGraphByKeyAndTemplate(t *testing.T) {
	host := okTarget("db1")
	host.Graphs = []string{"cpu", "load"}
	fb := newFakeDaemon(host, okTarget("sw1"))
	fb.rows = map[string][]RowStatus{"sw1": {{Key: "sw1/ge-1", Instance: "ge-1", Graphs: []string{"traffic"}}},
		"db1": {{Key: "db1/storage/_2F", Instance: "/", Graphs: []string{"storage"}}}}
	h := NewHandler(fb, testOptions())
	for _, c := range []struct {
		url      string
		code     int
		key      string // the Daemon.Graph call expected, "" for none
		template string
		body     string
	}{
		{GraphKeyURL("db1", "cpu", nil), 200, "db1", "cpu", ""},
		{GraphKeyURL("sw1/ge-1", "traffic", url.Values{"width": {"300"}}), 200, "sw1/ge-1", "traffic", ""},
		{GraphKeyURL("sw1/ge-1", "", nil), 200, "sw1/ge-1", "", ""},
		{GraphKeyURL("sw1/ge-1", "cpu", nil), 404, "", "", "no such graph template"},
		{GraphKeyURL("sw1/ge-9", "traffic", nil), 404, "", "", "unknown target"},
		{GraphKeyURL("sw1/../etc", "traffic", nil), 400, "", "", "bad graph parameter key"},
		{GraphKeyURL("sw1/a/b/c", "traffic", nil), 400, "", "", "bad graph parameter key"},
		{GraphKeyURL("sw1//b", "traffic", nil), 400, "", "", "bad graph parameter key"},
		{GraphKeyURL("db1/storage/_2F", "storage", nil), 200, "db1/storage/_2F", "storage", ""},
		{"/graph?key=db1&template=Bad!", 400, "", "", "bad graph parameter template"},
		{"/graph?key=db1&template=cpu&ds=cpu_user", 400, "", "", "give ds or template"},
		{"/graph/db1.png?template=cpu", 200, "db1", "cpu", ""},
		{"/graph/db1.png?key=sw1", 404, "", "", "no such graph"},
	} {
		t.Run(c.url, func(t *testing.T) {
			before := len(fb.graphCalls())
			resp := do(t, h, "GET", c.url, "")
			b, _ := io.ReadAll(resp.Body)
			calls := fb.graphCalls()[before:]
			if resp.StatusCode != c.code || !strings.Contains(string(b), c.body) {
				t.Fatalf("%d %q, want %d saying %q", resp.StatusCode, b, c.code, c.body)
			}
			if c.key == "" {
				if len(calls) != 0 {
					t.Fatalf("Daemon.Graph called: %+v", calls)
				}
				return
			}
			if len(calls) != 1 || calls[0].target != c.key {
				t.Fatalf("Daemon.Graph calls %+v, want one of %q", calls, c.key)
			}
			o := calls[0].o
			switch {
			case c.template == "" && o.Template != nil:
				t.Fatalf("template %s drawn, none asked", o.Template.Name)
			case c.template != "" && (o.Template == nil || o.Template.Name != c.template || o.Vars.Key != c.key):
				t.Fatalf("drawn with %+v vars %+v, want template %s of %s", o.Template, o.Vars, c.template, c.key)
			}
		})
	}
}

// TestPageOfTablesOnlyTarget: a target of tables only (no file of its own)
// gets no graph of its own on the page, a link to its device page with its
// row count, and its device page lists the rows without an own graph.
func TestPageOfTablesOnlyTarget(t *testing.T) {
	sw := okTarget("sw1")
	sw.TablesOnly, sw.Rows = true, 1
	fb := newFakeDaemon(sw, okTarget("r1"))
	fb.rows = map[string][]RowStatus{"sw1": {{Key: "sw1/ge-1", Instance: "ge-1", Alias: "uplink", State: "up", Graphs: []string{"traffic"}}}}
	h := NewHandler(fb, testOptions())
	b, _ := io.ReadAll(do(t, h, "GET", "/", "").Body)
	page := string(b)
	if strings.Contains(page, `<img src="/graph/sw1.png`) || !strings.Contains(page, `<img src="/graph/r1.png`) ||
		!strings.Contains(page, `<a href="/device/sw1">rows</a>`) || !strings.Contains(page, "1 rows") {
		t.Errorf("page: want no own graph of sw1, r1's graph, a rows link to sw1's device page:\n%s", page)
	}
	b, _ = io.ReadAll(do(t, h, "GET", DeviceURL("sw1"), "").Body)
	dev := string(b)
	if strings.Contains(dev, "/graph/sw1.png") || !strings.Contains(dev, `data-src="/graph?height=120&amp;key=sw1%2Fge-1`) ||
		!strings.Contains(dev, "uplink") || !strings.Contains(dev, `<span class="chip state up">up</span>`) {
		t.Errorf("device page of sw1:\n%s", dev)
	}
	if resp := do(t, h, "GET", DeviceURL("nosuch"), ""); resp.StatusCode != 404 {
		t.Errorf("device page of an unknown target: %d", resp.StatusCode)
	}
	if resp := do(t, h, "GET", DeviceURL("sw1")+"?page=0", ""); resp.StatusCode != 400 {
		t.Errorf("page=0: %d", resp.StatusCode)
	}
}

// pagedDevice is a target "sw1" of n rows p0, p1, ... with the graphs
// given, 2 rows a device page.
func pagedDevice(n int, graphs ...string) (*fakeDaemon, http.Handler) {
	fb := newFakeDaemon(okTarget("sw1"))
	fb.rows = map[string][]RowStatus{}
	for i := range n {
		fb.rows["sw1"] = append(fb.rows["sw1"], RowStatus{Key: "sw1/p" + strconv.Itoa(i), Instance: "p" + strconv.Itoa(i),
			State: "up", Graphs: graphs})
	}
	o := testOptions()
	o.DeviceRows = 2
	return fb, NewHandler(fb, o)
}

// TestDevicePages: rows beyond Options.DeviceRows go to further pages with
// previous and next links that keep the template; a page past the last
// shows the last.
func TestDevicePages(t *testing.T) {
	_, h := pagedDevice(5, "traffic", "packets")
	for _, c := range []struct {
		query string
		rows  []string
		prev  string
		next  string
	}{
		{"", []string{"p0", "p1"}, "", "page=2&amp;template=traffic"},
		{"?page=2&template=packets", []string{"p2", "p3"}, "page=1&amp;template=packets", "page=3&amp;template=packets"},
		{"?page=9", []string{"p4"}, "page=2&amp;template=traffic", ""},
	} {
		b, _ := io.ReadAll(do(t, h, "GET", DeviceURL("sw1")+c.query, "").Body)
		page := string(b)
		var shown []string
		for _, m := range regexp.MustCompile(`</span> (p\d)`).FindAllStringSubmatch(page, -1) {
			shown = append(shown, m[1])
		}
		if strings.Join(shown, ",") != strings.Join(c.rows, ",") {
			t.Errorf("%s: rows %v, want %v", c.query, shown, c.rows)
		}
		for _, l := range []struct{ word, q string }{{"previous", c.prev}, {"next", c.next}} {
			link := `<a href="/device/sw1?` + l.q + `">` + l.word + `</a>`
			if l.q != "" && !strings.Contains(page, link) || l.q == "" && strings.Contains(page, ">"+l.word+"</a>") {
				t.Errorf("%s: want %s link %q", c.query, l.word, l.q)
			}
		}
	}
}

// TestDevicePageKeepsTablesApart: a host's storage rows and processor rows
// each show under their own template, never one among the other's.
func TestDevicePageKeepsTablesApart(t *testing.T) {
	fb := newFakeDaemon(okTarget("h1"))
	fb.rows = map[string][]RowStatus{"h1": {
		{Key: "h1/storage/root", Instance: "/", State: "up", Graphs: []string{"storage"}},
		{Key: "h1/cpu/196608", Instance: "196608", State: "up", Graphs: []string{"processor"}},
		{Key: "h1/storage/swap", Instance: "Swap space", State: "up", Graphs: []string{"storage"}},
	}}
	h := NewHandler(fb, testOptions())
	for tmpl, want := range map[string][]string{"storage": {"/", "Swap space"}, "processor": {"196608"}} {
		b, _ := io.ReadAll(do(t, h, "GET", DeviceURL("h1")+"?template="+tmpl, "").Body)
		page := string(b)
		var shown []string
		for _, m := range regexp.MustCompile(`</span> ([^<]+)</figcaption>`).FindAllStringSubmatch(page, -1) {
			shown = append(shown, m[1])
		}
		if strings.Join(shown, ",") != strings.Join(want, ",") || strings.Contains(page, "graph for this row") ||
			!strings.Contains(page, "of "+strconv.Itoa(len(want))) {
			t.Errorf("template %s: rows %q, want %q:\n%s", tmpl, shown, want, page)
		}
	}
}

// TestDevicePageRanges: a range or a custom start and end in the device
// page's query is carried by every graph image of the page and by its
// template, page and range links; a bad one is answered 400 with the page,
// its error naming the field, and graphs of the default range.
func TestDevicePageRanges(t *testing.T) {
	fb, h := pagedDevice(3, "traffic", "packets")
	srcs := regexp.MustCompile(`data-src="([^"]+)"`)
	links := regexp.MustCompile(`<a (?:class="tmpl" )?href="(/device/sw1\?[^"]+)"`)
	rangeLinks := regexp.MustCompile(`<a class="range" data-range="(\w+)" href="([^"]+)"`)
	for _, c := range []struct {
		query, carried, chosen, err string
	}{
		{"?range=week", "range=week", "week", ""},
		{"?range=year&template=packets&page=2", "range=year", "year", ""},
		{"?start=-3d&end=-1d", "end=-1d&start=-3d", "", ""},
		{"?start=1700000000", "start=1700000000", "", ""},
		{"", "start=-86400s", "day", ""},
		{"?start=yesterday", "start=-86400s", "day", `bad start &#34;yesterday&#34;: want Unix seconds`},
		{"?start=-1d&end=-2d", "start=-86400s", "day", `bad start &#34;-1d&#34;: must be before end`},
		{"?range=fortnight", "start=-86400s", "day", `bad range &#34;fortnight&#34;: want day, week, month or year`},
		{"?range=week&end=soon", "start=-86400s", "day", `bad end &#34;soon&#34;`},
	} {
		resp := do(t, h, "GET", DeviceURL("sw1")+c.query, "")
		page := readBody(t, resp)
		if want := map[bool]int{true: 200, false: 400}[c.err == ""]; resp.StatusCode != want {
			t.Errorf("%s: status %d, want %d", c.query, resp.StatusCode, want)
		}
		if c.err != "" && !strings.Contains(page, `<p class="bad" id="range-error">`+c.err) {
			t.Errorf("%s: no error %q on the page:\n%s", c.query, c.err, page)
		}
		imgs := srcs.FindAllStringSubmatch(page, -1)
		if len(imgs) < 2 {
			t.Fatalf("%s: %d graph images", c.query, len(imgs))
		}
		for _, m := range imgs {
			u, _ := url.Parse(html.UnescapeString(m[1]))
			got := url.Values{}
			for _, k := range []string{"range", "start", "end"} {
				if v := u.Query().Get(k); v != "" {
					got.Set(k, v)
				}
			}
			if got.Encode() != c.carried {
				t.Errorf("%s: graph %s carries %q, want %q", c.query, u, got.Encode(), c.carried)
			}
			if resp := do(t, h, "GET", u.String(), ""); resp.StatusCode != 200 {
				t.Errorf("%s: graph %s: status %d", c.query, u, resp.StatusCode)
			}
		}
		if ls := links.FindAllStringSubmatch(page, -1); c.err == "" && len(ls) < 2 {
			t.Errorf("%s: %d template and page links", c.query, len(ls))
		}
		for _, m := range links.FindAllStringSubmatch(page, -1) {
			u, _ := url.Parse(html.UnescapeString(m[1]))
			want, _ := url.ParseQuery(c.carried)
			for k := range want {
				if c.chosen != "day" && u.Query().Get(k) != want.Get(k) { // the default is not in the page's links
					t.Errorf("%s: link %s drops %s=%s", c.query, u, k, want.Get(k))
				}
			}
		}
		rl := rangeLinks.FindAllStringSubmatch(page, -1)
		if want := len(GraphRanges) - map[bool]int{true: 1, false: 0}[c.chosen != ""]; len(rl) != want ||
			c.chosen != "" && !strings.Contains(page, `<span class="chip ok">`+c.chosen+`</span>`) {
			t.Errorf("%s: %d range links, want %d and %q shown chosen", c.query, len(rl), want, c.chosen)
		}
		for _, m := range rl {
			u, _ := url.Parse(html.UnescapeString(m[2]))
			if u.Query().Get("range") != m[1] || u.Query().Has("start") || u.Query().Has("end") {
				t.Errorf("%s: the %s link is %s", c.query, m[1], u)
			}
		}
	}
	// The named ranges reach the daemon as the spans they stand for.
	before := len(fb.graphCalls())
	do(t, h, "GET", "/graph?key=sw1/p0&template=traffic&range=month", "")
	calls := fb.graphCalls()[before:]
	if len(calls) != 1 || calls[0].o.End.Sub(calls[0].o.Start) != 31*24*time.Hour {
		t.Errorf("range=month drew %+v, want 31 days", calls)
	}
}
