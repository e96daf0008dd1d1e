package admin

import (
	"fmt"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/browsertest"
)

// deviceRows is the size of the device of the browser tests: a chassis of
// 3,000 interfaces (or a page of many switches' rows).
const deviceRows = 3000

// bigDevice serves a target "sw1" of deviceRows rows, perPage on a device
// page.
func bigDevice(perPage int) (*fakeDaemon, *httptest.Server) {
	sw := okTarget("sw1")
	sw.Rows = deviceRows
	fb := newFakeDaemon(sw)
	fb.rows = map[string][]RowStatus{}
	for i := range deviceRows {
		state := "up"
		if i%7 == 3 {
			state = "down"
		}
		fb.rows["sw1"] = append(fb.rows["sw1"], RowStatus{Key: fmt.Sprintf("sw1/ge-0_0_%d", i),
			Instance: fmt.Sprintf("ge-0/0/%d", i), Alias: fmt.Sprintf("port %d to rack %d", i, i/48),
			State: state, Graphs: []string{"traffic", "packets", "errors"}})
	}
	o := testOptions()
	o.DeviceRows = perPage
	return fb, httptest.NewServer(NewHandler(fb, o))
}

// bodyAttr reads a data-* number the page's script wrote on <body>; -1 if
// it is absent.
func bodyAttr(dom, name string) int {
	m := regexp.MustCompile(`<body[^>]*` + name + `="(\d+)"`).FindStringSubmatch(dom)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestDevicePageLazyInChromium loads the device page of 3,000 rows in
// headless Chromium: every row is listed with its name, alias and state,
// and only the graphs near the window are requested (each one a flush and
// a librrd render in the daemon), all of which load; a jump to the last
// row requests that row's graph, still not the thousands between.
func TestDevicePageLazyInChromium(t *testing.T) {
	bin := browsertest.Binary(t)
	fb, srv := bigDevice(deviceRows) // all on one page: the worst case
	defer srv.Close()

	dom := string(browsertest.Run(t, bin, "--window-size=1200,900", "--virtual-time-budget=10000", "--dump-dom", srv.URL+DeviceURL("sw1")))
	calls := fb.graphCalls()
	total, requested := bodyAttr(dom, "data-images-total"), bodyAttr(dom, "data-images-requested")
	loaded, failed, done, ok := browsertest.Images(dom)
	if !ok {
		t.Fatalf("the page's image script did not run; DOM starts:\n%.2000s", dom)
	}
	// The rows' graphs and the device's own (its scalars' data sources).
	if total != deviceRows+1 || strings.Count(dom, `class="graph row `) != deviceRows {
		t.Errorf("%d graph images, %d rows on the page, want %d", total, strings.Count(dom, `class="graph row `), deviceRows+1)
	}
	if requested < 4 || requested > 40 || len(calls) != requested || loaded != requested || failed != 0 || !done {
		t.Errorf("before scrolling: %d graphs requested (%d reached the daemon), %d loaded, %d failed, settled %v; want the few on screen (4 to 40), all loaded",
			requested, len(calls), loaded, failed, done)
	}
	for _, c := range calls {
		if c.target == "sw1" && c.o.Template == nil {
			continue // the device's own graph, at the top
		}
		if c.o.Template == nil || c.o.Template.Name != "traffic" || !strings.HasPrefix(c.target, "sw1/ge-0_0_") {
			t.Fatalf("graph of %q with template %v, want the rows' traffic graphs", c.target, c.o.Template)
		}
	}
	if !strings.Contains(dom, "ge-0/0/2999") || !strings.Contains(dom, "port 2999 to rack 62") || !strings.Contains(dom, `<span class="chip state down">down</span>`) {
		t.Errorf("the rows are not listed with instance, alias and state")
	}
	t.Logf("3,000 rows: dom interactive %d ms, first contentful paint %d ms, %d graphs requested before scrolling",
		bodyAttr(dom, "data-dom-interactive-ms"), bodyAttr(dom, "data-first-paint-ms"), requested)

	before := len(calls)
	dom = string(browsertest.Run(t, bin, "--window-size=1200,900", "--virtual-time-budget=10000", "--dump-dom",
		srv.URL+DeviceURL("sw1")+"?template=packets#r-3000"))
	calls = fb.graphCalls()[before:]
	last := false
	for _, c := range calls {
		last = last || c.target == "sw1/ge-0_0_2999" && c.o.Template != nil && c.o.Template.Name == "packets"
	}
	if !last || len(calls) > 40 {
		t.Errorf("at the last row: %d graphs requested, the last row's packets graph among them: %v", len(calls), last)
	}
}

// BenchmarkDevicePageChromium loads the device page of 3,000 rows in
// headless Chromium (one browser start per load), all rows on one page
// ("one-page") and in pages of the default 500 ("paged"), interleaved
// A-B, B-A so that the machine's load falls on both alike: the page's own
// timings, the wall time of the browser's run, and the graphs requested
// before any scrolling.
func BenchmarkDevicePageChromium(b *testing.B) {
	bin := browsertest.Binary(b)
	type layout struct {
		name                              string
		fb                                *fakeDaemon
		url                               string
		interactive, paint, requests, run float64
	}
	var layouts []*layout
	for _, c := range []struct {
		name string
		per  int
	}{{"one-page", deviceRows}, {"paged", DefaultOptions().DeviceRows}} {
		fb, srv := bigDevice(c.per)
		defer srv.Close()
		layouts = append(layouts, &layout{name: c.name, fb: fb, url: srv.URL + DeviceURL("sw1")})
	}
	load := func(l *layout) {
		before := len(l.fb.graphCalls())
		start := time.Now()
		dom := string(browsertest.Run(b, bin, "--window-size=1200,900", "--virtual-time-budget=10000", "--dump-dom", l.url))
		l.run += float64(time.Since(start).Milliseconds())
		l.interactive += float64(bodyAttr(dom, "data-dom-interactive-ms"))
		l.paint += float64(bodyAttr(dom, "data-first-paint-ms"))
		l.requests += float64(len(l.fb.graphCalls()) - before)
	}
	i := 0
	for b.Loop() {
		a, c := layouts[i%2], layouts[1-i%2]
		load(a)
		load(c)
		i++
	}
	n := float64(i)
	for _, l := range layouts {
		b.ReportMetric(l.interactive/n, l.name+"-dom-interactive-ms")
		b.ReportMetric(l.paint/n, l.name+"-first-paint-ms")
		b.ReportMetric(l.run/n, l.name+"-chromium-run-ms")
		b.ReportMetric(l.requests/n, l.name+"-graph-requests")
	}
}

// pageImages is what the device page shows once its image script settled.
type pageImages struct {
	Search string
	Error  string
	Images []struct {
		Src   string
		Width int
	}
}

// settledImages waits in the page for its image script to settle and
// returns the page's query, its range error and its images.
func settledImages(b *browsertest.Browser) pageImages {
	var p pageImages
	b.Eval(`new Promise(resolve => {
		const body = document.body, done = () => body.getAttribute("data-images-done") === "1";
		const report = () => resolve({Search: location.search,
			Error: (document.getElementById("range-error") || {}).textContent || "",
			Images: Array.from(document.images, i => ({Src: i.currentSrc || i.src, Width: i.naturalWidth}))});
		if (done()) return report();
		new MutationObserver((_, o) => { if (done()) { o.disconnect(); report(); } }).observe(body, {attributes: true});
	})`, &p)
	return p
}

// TestDeviceRangesInChromium clicks the device page's week link and then
// types a custom start and end in headless Chromium: after each, the page's
// URL keeps the choice, every graph image's URL carries it and rendered
// (naturalWidth > 0), and the daemon drew each graph over that span. A bad
// start or end shows an error that names the field.
func TestDeviceRangesInChromium(t *testing.T) {
	bin := browsertest.Binary(t)
	fb, h := pagedDevice(3, "traffic")
	srv := httptest.NewServer(h)
	defer srv.Close()
	b := browsertest.Start(t, bin, "--window-size=1200,2000")
	b.Navigate(srv.URL + DeviceURL("sw1"))
	if p := settledImages(b); len(p.Images) != 3 { // the device's own graph and a page of 2 rows
		t.Fatalf("%d graph images on the page, want 3: %+v", len(p.Images), p)
	}

	check := func(step string, carried url.Values, start, end time.Time) {
		t.Helper()
		p := settledImages(b)
		at, _ := url.ParseQuery(strings.TrimPrefix(p.Search, "?"))
		for k := range carried {
			if at.Get(k) != carried.Get(k) || p.Error != "" {
				t.Errorf("%s: the page is at %q with error %q, want %s=%s", step, p.Search, p.Error, k, carried.Get(k))
			}
		}
		if len(p.Images) != 3 { // the device's own graph and a page of 2 rows
			t.Errorf("%s: %d graph images, want 3", step, len(p.Images))
		}
		for _, img := range p.Images {
			u, err := url.Parse(img.Src)
			if err != nil || img.Width == 0 {
				t.Errorf("%s: image %q did not render (naturalWidth %d)", step, img.Src, img.Width)
				continue
			}
			for k := range carried {
				if u.Query().Get(k) != carried.Get(k) {
					t.Errorf("%s: image %s lacks %s=%s", step, u, k, carried.Get(k))
				}
			}
		}
		calls := fb.graphCalls()
		if len(calls) < len(p.Images) {
			t.Fatalf("%s: %d graphs drawn for %d images", step, len(calls), len(p.Images))
		}
		for _, c := range calls[len(calls)-len(p.Images):] {
			if !c.o.Start.Equal(start) || !c.o.End.Equal(end) {
				t.Errorf("%s: %s drawn over %v..%v, want %v..%v", step, c.target, c.o.Start, c.o.End, start, end)
			}
		}
	}
	b.ClickAndWait(`a[data-range="week"]`)
	check("week", url.Values{"range": {"week"}}, testNow.Add(-7*24*time.Hour), testNow)

	b.Type(`form.custom input[name="start"]`, "-3d")
	b.Type(`form.custom input[name="end"]`, "-1d")
	b.ClickAndWait(`form.custom button`)
	check("custom", url.Values{"start": {"-3d"}, "end": {"-1d"}},
		testNow.Add(-3*24*time.Hour), testNow.Add(-24*time.Hour))

	for _, c := range []struct{ field, value string }{{"start", "yesterday"}, {"end", "-2x"}} {
		b.Type(`form.custom input[name="`+c.field+`"]`, c.value)
		b.ClickAndWait(`form.custom button`)
		p := settledImages(b)
		if want := "bad " + c.field + ` "` + c.value + `"`; !strings.HasPrefix(p.Error, want) {
			t.Errorf("%s=%s: the page's error is %q, want one starting %q", c.field, c.value, p.Error, want)
		}
		b.Type(`form.custom input[name="`+c.field+`"]`, map[string]string{"start": "-3d", "end": "-1d"}[c.field])
	}
}
