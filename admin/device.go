package admin

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The device page, /device/{target}: a target's own graphs, then its table
// rows (an interface, a disk) with instance name, alias and state and one
// graph each of the chosen template, a page of Options.DeviceRows rows at a
// time. The graphs are loaded lazily by page.js (an IntersectionObserver
// starts a graph as it comes near the window, a few at a time), so a
// device of thousands of interfaces costs the graphs on screen, not all.
// The page's "range", "start" and "end" (checked as /graph checks them)
// choose the time range of every graph on it and are passed on to each
// graph's URL and to the page's other links.

//go:embed device.html
var deviceHTML string

var deviceTemplate = template.Must(template.New("device").Parse(deviceHTML))

// deviceCSP is the pages' policy with the device page's range form allowed
// to submit to the page itself.
var deviceCSP = strings.Replace(pageCSP, "form-action 'none'", "form-action 'self'", 1)

type devicePage struct {
	Style     template.CSS
	Script    template.JS
	Target    targetView
	Own       []graphView
	Templates []templateLink
	Template  string
	Rows      []rowView
	Total     int
	First     int // row number of Rows[0], from 1
	Last      int
	Page      int
	Pages     int
	Prev      string
	Next      string
	Width     int
	Height    int
	Path      string // the page's own, the range form's action
	Ranges    []templateLink
	// Start and End are the custom range's inputs as given; SpanError
	// says which of range, start or end is wrong, and how.
	Start, End, SpanError string
}

type graphView struct{ Name, URL string }

type templateLink struct {
	Name, URL string
	Selected  bool
}

type rowView struct {
	RowStatus
	N        int // from 1, over all rows
	GraphURL string
}

// GraphKeyURL returns the URL of key's graph: /graph?key=...&template=...
// and the other parameters of q.
func GraphKeyURL(key, tmpl string, q url.Values) string {
	v := url.Values{"key": {key}}
	if tmpl != "" {
		v.Set("template", tmpl)
	}
	for k, vs := range q {
		v[k] = vs
	}
	return "/graph?" + v.Encode()
}

// DeviceURL returns the URL of target's device page.
func DeviceURL(target string) string { return "/device/" + url.PathEscape(target) }

func (h *handler) device(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("target")
	q := r.URL.Query()
	var t *TargetStatus
	s := h.snapshot()
	for i := range s.Targets {
		if s.Targets[i].Name == name {
			t = &s.Targets[i]
		}
	}
	if t == nil || !ValidTargetName(name) {
		httpError(w, http.StatusNotFound, "unknown target "+quote(name))
		return
	}
	rows, err := h.b.Rows(name)
	if errors.Is(err, ErrUnknownTarget) {
		httpError(w, http.StatusNotFound, "unknown target "+quote(name))
		return
	}
	if err != nil {
		h.log.Error("list rows", "target", name, "err", err)
		httpError(w, http.StatusInternalServerError, "list the rows of "+quote(name)+" failed; see the log")
		return
	}
	page := 1
	if v := q.Get("page"); v != "" {
		if page, err = strconv.Atoi(v); err != nil || page < 1 {
			httpError(w, http.StatusBadRequest, (&GraphQueryError{"page", v, "want a page number from 1"}).Error())
			return
		}
	}
	span, spanErr := graphSpanOf(q, h.o.Now())
	d := h.devicePage(*t, rows, q.Get("template"), page, s, span)
	code := http.StatusOK
	if spanErr != nil {
		code, d.SpanError = http.StatusBadRequest, spanErr.Error()
	}
	d.Start, d.End = q.Get("start"), q.Get("end")
	var buf bytes.Buffer
	if err := deviceTemplate.Execute(&buf, d); err != nil {
		h.log.Error("render device page", "err", err)
		httpError(w, http.StatusInternalServerError, "render page: see the log")
		return
	}
	w.Header().Set("Content-Security-Policy", deviceCSP)
	writeBody(w, code, "text/html; charset=utf-8", buf.Bytes())
}

// graphSpanOf returns the range, start and end given in q, checked as
// /graph checks them; on an error it returns none, so the page shows its
// default range with the error.
func graphSpanOf(q url.Values, now time.Time) (url.Values, error) {
	span := url.Values{}
	for _, k := range []string{"range", "start", "end"} {
		if v := q.Get(k); v != "" {
			span.Set(k, v)
		}
	}
	if _, _, err := parseGraphSpan(span, now); err != nil {
		var qe *GraphQueryError
		if errors.As(err, &qe) {
			err = fmt.Errorf("bad %s %q: %s", qe.Param, qe.Value, qe.Why)
		}
		return nil, err
	}
	return span, nil
}

// devicePage lays out the page; span is the range of its graphs (none: the
// pages' default).
func (h *handler) devicePage(t TargetStatus, rows []RowStatus, tmpl string, page int, s Status, span url.Values) devicePage {
	gq := h.pageGraphQuery()
	if len(span) > 0 {
		delete(gq, "start")
		maps.Copy(gq, span)
	}
	d := devicePage{Style: template.CSS(pageCSS), Script: template.JS(pageJS), Path: DeviceURL(t.Name),
		Target: targetViewOf(t, s.Now, gq), Total: len(rows), Width: pageGraphWidth, Height: pageGraphHeight}
	for _, g := range t.Graphs {
		d.Own = append(d.Own, graphView{g, GraphKeyURL(t.Name, g, gq)})
	}
	if len(t.Graphs) == 0 && d.Target.GraphURL != "" {
		d.Own = append(d.Own, graphView{"data sources", d.Target.GraphURL})
	}
	// The row templates: the union of the rows', in their order.
	seen := map[string]bool{}
	for _, r := range rows {
		for _, g := range r.Graphs {
			if !seen[g] {
				seen[g] = true
				d.Templates = append(d.Templates, templateLink{Name: g})
			}
		}
	}
	if !seen[tmpl] && len(d.Templates) > 0 {
		tmpl = d.Templates[0].Name
	}
	d.Template = tmpl
	// A template's rows only: a profile's tables (storage, processors)
	// have their own templates, and one's rows are not the other's.
	if len(d.Templates) > 0 {
		rows = slices.DeleteFunc(slices.Clone(rows), func(r RowStatus) bool {
			return len(r.Graphs) > 0 && !slices.Contains(r.Graphs, tmpl)
		})
		d.Total = len(rows)
	}
	for i := range d.Templates {
		l := &d.Templates[i]
		l.Selected, l.URL = l.Name == tmpl, deviceLink(d.Path, l.Name, span, nil)
	}
	per := h.o.DeviceRows
	d.Pages = max(1, (len(rows)+per-1)/per)
	d.Page = min(page, d.Pages)
	lo, hi := (d.Page-1)*per, min(d.Page*per, len(rows))
	pageURL := func(p int) string { return deviceLink(d.Path, tmpl, span, url.Values{"page": {strconv.Itoa(p)}}) }
	d.Ranges = h.rangeLinks(d.Path, tmpl, d.Page, span)
	if d.Page > 1 {
		d.Prev = pageURL(d.Page - 1)
	}
	if d.Page < d.Pages {
		d.Next = pageURL(d.Page + 1)
	}
	d.First, d.Last = lo+1, hi
	for i, r := range rows[lo:hi] {
		v := rowView{RowStatus: r, N: lo + i + 1}
		if ValidGraphKey(r.Key) && slices.Contains(r.Graphs, tmpl) {
			v.GraphURL = GraphKeyURL(r.Key, tmpl, gq)
		}
		d.Rows = append(d.Rows, v)
	}
	return d
}

// deviceLink is the device page at path with a template, a span and more.
func deviceLink(path, tmpl string, span, more url.Values) string {
	v := url.Values{}
	if tmpl != "" {
		v.Set("template", tmpl)
	}
	maps.Copy(v, span)
	maps.Copy(v, more)
	return path + "?" + v.Encode()
}

// rangeLinks are the device page's links to each of GraphRanges, keeping
// the template and page; the one of span, or of the pages' default span
// when none is given, is chosen.
func (h *handler) rangeLinks(path, tmpl string, page int, span url.Values) []templateLink {
	var links []templateLink
	for _, r := range GraphRanges {
		more := url.Values{"range": {r.Name}}
		if page > 1 {
			more.Set("page", strconv.Itoa(page))
		}
		chosen := span.Get("range") == r.Name || len(span) == 0 && h.o.PageGraphSpan == r.Span
		links = append(links, templateLink{r.Name, deviceLink(path, tmpl, nil, more), chosen})
	}
	return links
}
