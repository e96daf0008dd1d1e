package admin

import (
	"io"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
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

// TestDevicePages: rows beyond Options.DeviceRows go to further pages with
// previous and next links that keep the template; a page past the last
// shows the last.
func TestDevicePages(t *testing.T) {
	fb := newFakeDaemon(okTarget("sw1"))
	fb.rows = map[string][]RowStatus{}
	for i := range 5 {
		fb.rows["sw1"] = append(fb.rows["sw1"], RowStatus{Key: "sw1/p" + strconv.Itoa(i), Instance: "p" + strconv.Itoa(i),
			State: "up", Graphs: []string{"traffic", "packets"}})
	}
	o := testOptions()
	o.DeviceRows = 2
	h := NewHandler(fb, o)
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
