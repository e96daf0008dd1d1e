package admin

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spoold/spoold/rrdwriter"
)

var (
	//go:embed page.html
	pageHTML string
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string
)

// pageTemplate is the operator's page. Its script is embedded verbatim and
// allowed by hash in the Content-Security-Policy, so the page runs no other
// script and loads nothing but its own graphs. Styles stay 'unsafe-inline'
// for the bars' style="width: N%" attributes (values from the template's
// CSS escaper).
var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"pct": func(f float64) string { return strconv.FormatFloat(100*clamp01(f), 'f', 1, 64) },
}).Parse(pageHTML))

var pageCSP = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; script-src '" +
	cspHash(pageJS) + "'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}

// Page graph layout: the last day, sized for a grid of cards.
const (
	pageGraphWidth   = 480
	pageGraphHeight  = 120
	pageMaxErrors    = 50
	pageMaxAttention = 50
)

// GraphURL returns the URL path and query of target's graph, with the name
// escaped as one path segment.
func GraphURL(target string, q url.Values) string {
	u := "/graph/" + url.PathEscape(target) + ".png"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

type pageData struct {
	S         Status
	Now       time.Time
	Refresh   int
	Style     template.CSS
	Script    template.JS
	Uptime    string
	Counts    []healthCount
	Loader    loaderView
	IndexFill float64
	IndexUsed string
	IndexCap  string
	OldestAge string
	Cycle     *cycleView
	Targets   []targetView
	Graphs    []targetView
	// Attention are the targets failing, in backoff or with a write error.
	Attention     []targetView
	MoreAttention int
	MoreGraphs    int
	Errors        []writerErrorView
	MoreErrors    int
	Settings      []setting
	Disk          diskView
}

type healthCount struct {
	Health Health
	N      int
}

type loaderView struct {
	State, ETA, Rate, Params string
	Progress                 float64
}

type cycleView struct {
	Seq                          uint64
	Ago, Duration, Interval      string
	Devices, OK, Failed, Skipped int
	Overrun, Stopped, Values     int
	Unknown                      int
	Load                         float64 // duration / interval
}

type targetView struct {
	TargetStatus
	GraphURL    string // empty for a name ValidTargetName refuses
	DeviceURL   string // likewise
	LastSuccess string
	RTT         string
	Problem     string
}

type writerErrorView struct {
	Target, Kind, Err, Ago, Retry string
	Failures                      int
}

type setting struct{ Name, Value string }

func (h *handler) page(w http.ResponseWriter, r *http.Request) {
	body, err := h.pageBody.get(func() ([]byte, error) {
		var buf bytes.Buffer
		if err := pageTemplate.Execute(&buf, h.pageData(h.snapshot())); err != nil {
			h.log.Error("render admin page", "err", err)
			return nil, err
		}
		return buf.Bytes(), nil
	})
	if err != nil {
		httpError(w, http.StatusInternalServerError, "render page: see the log")
		return
	}
	w.Header().Set("Content-Security-Policy", pageCSP)
	writeBody(w, http.StatusOK, "text/html; charset=utf-8", body)
}

func (h *handler) pageData(s Status) pageData {
	now := s.Now
	d := pageData{
		S: s, Now: now, Refresh: int(h.o.Refresh / time.Second),
		Style: template.CSS(pageCSS), Script: template.JS(pageJS),
		Loader:    loaderViewOf(s),
		IndexFill: s.Index.Fill(),
		IndexUsed: humanBytes(s.Index.Bytes), IndexCap: humanBytes(s.Index.MaxBytes),
		OldestAge: humanDuration(s.Writer.OldestPendingAge),
		Disk:      diskViewOf(s.Disk, now),
	}
	if !s.Started.IsZero() {
		d.Uptime = humanDuration(now.Sub(s.Started))
	}
	counts := map[Health]int{}
	for _, t := range s.Targets {
		counts[t.Health]++
	}
	for _, hs := range healthStates {
		d.Counts = append(d.Counts, healthCount{hs, counts[hs]})
	}
	if c := s.LastCycle; c != nil {
		d.Cycle = &cycleView{
			Seq: c.Seq, Ago: ago(now, c.Start), Duration: humanDuration(c.Duration),
			Interval: humanDuration(s.PollInterval), Devices: c.Devices, OK: c.OK,
			Failed: c.Failed, Skipped: c.Skipped, Overrun: c.Overrun, Stopped: c.Stopped, Values: c.Values,
			Unknown: c.Unknown,
		}
		if s.PollInterval > 0 {
			d.Cycle.Load = float64(c.Duration) / float64(s.PollInterval)
		}
	}
	q := h.pageGraphQuery()
	for _, t := range s.Targets {
		v := targetViewOf(t, now, q)
		d.Targets = append(d.Targets, v)
		if v.GraphURL != "" && len(d.Graphs) < h.o.PageGraphs {
			d.Graphs = append(d.Graphs, v)
		}
		if v.Problem != "" || t.Health == HealthFailing || t.Health == HealthBackoff {
			if len(d.Attention) < pageMaxAttention {
				d.Attention = append(d.Attention, v)
			} else {
				d.MoreAttention++
			}
		}
	}
	d.MoreGraphs = len(s.Targets) - len(d.Graphs)
	for i, e := range s.WriterErrors {
		if i == pageMaxErrors {
			d.MoreErrors = len(s.WriterErrors) - i
			break
		}
		d.Errors = append(d.Errors, writerErrorViewOf(e, now))
	}
	for _, k := range slices.Sorted(maps.Keys(s.Settings)) {
		d.Settings = append(d.Settings, setting{k, s.Settings[k]})
	}
	return d
}

// pageGraphQuery is the range and size of the pages' graphs.
func (h *handler) pageGraphQuery() url.Values {
	return url.Values{"start": {"-" + strconv.FormatInt(int64(h.o.PageGraphSpan/time.Second), 10) + "s"},
		"width": {strconv.Itoa(pageGraphWidth)}, "height": {strconv.Itoa(pageGraphHeight)}}
}

func loaderViewOf(s Status) loaderView {
	l := s.Loader
	v := loaderView{Progress: l.Progress, Rate: strconv.FormatFloat(l.Rate, 'f', 0, 64) + " files/s"}
	switch {
	case l.Running:
		v.State = "walking the spool"
		v.ETA = "unknown"
		if l.ETA > 0 {
			v.ETA = humanDuration(l.ETA)
		}
	case l.Started.IsZero():
		v.State = "not run yet"
	default:
		v.State = "done " + ago(s.Now, l.Finished)
	}
	p := l.Params
	if p.CPUMode() {
		v.Params = fmt.Sprintf("cpu %s%%, threshold %s (iteration %d files)",
			strconv.FormatFloat(p.CPU*100, 'f', -1, 64), p.Threshold, l.IterationFiles)
	} else {
		v.Params = fmt.Sprintf("files %d, sleep %s, threshold %s", p.Files, p.Sleep, p.Threshold)
	}
	return v
}

func targetViewOf(t TargetStatus, now time.Time, q url.Values) targetView {
	v := targetView{TargetStatus: t, LastSuccess: "never"}
	if ValidTargetName(t.Name) {
		v.DeviceURL = DeviceURL(t.Name)
		switch {
		case t.TablesOnly:
		case len(t.Graphs) > 0:
			v.GraphURL = GraphKeyURL(t.Name, t.Graphs[0], q)
		default:
			v.GraphURL = GraphURL(t.Name, q)
		}
	}
	if !t.LastSuccess.IsZero() {
		v.LastSuccess = ago(now, t.LastSuccess)
	}
	if t.RTT > 0 {
		v.RTT = humanDuration(t.RTT)
	}
	switch {
	case t.WriteError != "" && t.LastError != "":
		v.Problem = "poll: " + t.LastError + "; write (" + t.WriteErrorKind + "): " + t.WriteError
	case t.WriteError != "":
		v.Problem = "write (" + t.WriteErrorKind + "): " + t.WriteError
	case t.LastError != "":
		v.Problem = "poll: " + t.LastError
	}
	if t.Attention != "" {
		v.Problem = strings.TrimPrefix(v.Problem+"; "+t.Attention, "; ")
	}
	return v
}

func writerErrorViewOf(e rrdwriter.TargetError, now time.Time) writerErrorView {
	v := writerErrorView{Target: e.Key, Kind: e.Kind.String(), Err: e.Err, Ago: ago(now, e.At), Failures: e.Failures}
	if e.RetryAt.After(now) {
		v.Retry = "in " + humanDuration(e.RetryAt.Sub(now))
	}
	return v
}

func clamp01(f float64) float64 {
	switch {
	case f < 0 || f != f:
		return 0
	case f > 1:
		return 1
	}
	return f
}

// ago says how long before now t was: "12s ago".
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	if d < 0 {
		return "in " + humanDuration(-d)
	}
	return humanDuration(d) + " ago"
}

// humanDuration rounds d for a person: "850ms", "42s", "3m12s", "5h03m", "2d04h".
func humanDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		return strconv.FormatFloat(d.Seconds(), 'f', 0, 64) + "s"
	case d < time.Hour:
		d = d.Round(time.Second)
		return fmt.Sprintf("%dm%02ds", d/time.Minute, d%time.Minute/time.Second)
	case d < 48*time.Hour:
		d = d.Round(time.Minute)
		return fmt.Sprintf("%dh%02dm", d/time.Hour, d%time.Hour/time.Minute)
	}
	d = d.Round(time.Hour)
	return fmt.Sprintf("%dd%02dh", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
}

// humanBytes writes n in binary units: "512 B", "3.2 MiB".
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return strconv.FormatInt(n, 10) + " B"
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64) + " " + "KMGTPE"[exp:exp+1] + "iB"
}
