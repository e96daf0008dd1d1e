package admin

import (
	"io"
	"net/url"
	"strings"
	"testing"
)

// TestGraphByKeyAndTemplate: /graph?key=&template= draws the key's template
// with its variables; a row key, an unknown template, a bad key or a
// template with ds are answered without or with the right Backend call.
func TestGraphByKeyAndTemplate(t *testing.T) {
	host := okTarget("db1")
	host.Graphs = []string{"cpu", "load"}
	fb := newFakeBackend(host, okTarget("sw1"))
	fb.rows = map[string][]RowStatus{"sw1": {{Key: "sw1/ge-1", Instance: "ge-1", Graphs: []string{"traffic"}}},
		"db1": {{Key: "db1/storage/_2F", Instance: "/", Graphs: []string{"storage"}}}}
	h := NewHandler(fb, testOptions())
	for _, c := range []struct {
		url      string
		code     int
		key      string // the Backend.Graph call expected, "" for none
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
					t.Fatalf("Backend.Graph called: %+v", calls)
				}
				return
			}
			if len(calls) != 1 || calls[0].target != c.key {
				t.Fatalf("Backend.Graph calls %+v, want one of %q", calls, c.key)
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
