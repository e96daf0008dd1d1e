package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/spoold/spoold/graph"
)

// Options configure the admin handler and server.
type Options struct {
	// Listen is the server's TCP address. Default "127.0.0.1:8780": local
	// only, since GETs need no token.
	Listen string
	// Token, when not empty, is the bearer token POST /flush and POST
	// /loader require ("Authorization: Bearer <token>").
	Token string
	// Refresh is how often the HTML page reloads itself. Default 30 s;
	// at most once per second.
	Refresh time.Duration
	// PageGraphs is the most targets whose graphs the HTML page shows (the
	// first ones in Status.Targets order; every target is listed). Each
	// graph flushes and renders on every refresh. Default 24.
	PageGraphs int
	// DeviceRows is the most table rows a device page shows at once (its
	// graphs load as they scroll into view); more go to further pages.
	// Default 500.
	DeviceRows int
	// PageGraphSpan is the time range of the page's graphs, ending now.
	// Default 1 day; the demo, polling every few seconds, shows less.
	PageGraphSpan time.Duration
	// GraphTimeout bounds one graph request (flush and render). Default 30 s.
	GraphTimeout time.Duration
	// GraphMaxDS is the most data sources one graph draws; a request naming
	// more is refused (400), one naming none draws the file's first ones.
	// Default graph.DefaultMaxDS (32); at most MaxGraphDS.
	GraphMaxDS int
	// GraphMaxBytes bounds the values librrd fetches for one graph (see
	// graph.Options.MaxBytes); beyond it the request is refused
	// (400). Default graph.DefaultMaxBytes (256 MiB).
	GraphMaxBytes int64
	// GraphConcurrency is the most graph requests flushed and rendered at
	// once (librrd draws one at a time anyway); GraphQueue more may wait
	// for a turn within GraphTimeout. A request beyond both is answered
	// 503 with Retry-After. Defaults 2 and 16; GraphQueue < 0 means none
	// may wait.
	GraphConcurrency, GraphQueue int
	// FlushTimeout bounds POST /flush. Default 2 minutes.
	FlushTimeout time.Duration
	// StatusMaxAge is how long a rendered /status, /metrics or page body
	// is served again to other requests (a POST drops it). 0, the
	// default, renders every request.
	StatusMaxAge time.Duration
	// Metrics is what GET /metrics serves: the daemon's registry, with
	// NewCollector of the handler's Daemon and the Go and process
	// collectors registered on it. Nil serves a registry of the handler's
	// own with NewCollector alone.
	Metrics prometheus.Gatherer
	// Profiling serves Go's runtime profiles (net/http/pprof) under
	// /debug/pprof/: heap, CPU, goroutines, allocations. Each needs the
	// Token when one is set, as the POSTs do. Off by default: a CPU
	// profile costs the daemon while it runs.
	Profiling bool
	// Logger receives failed requests; nil discards.
	Logger *slog.Logger
	// Now is the clock of relative graph times and uptimes; nil is time.Now.
	Now func() time.Time
}

// DefaultOptions returns the defaults documented on Options.
func DefaultOptions() Options {
	return Options{
		Listen: "127.0.0.1:8780", Refresh: 30 * time.Second, PageGraphs: 24, DeviceRows: 500, PageGraphSpan: 24 * time.Hour,
		GraphTimeout: 30 * time.Second, FlushTimeout: 2 * time.Minute,
		GraphMaxDS: graph.DefaultMaxDS, GraphMaxBytes: graph.DefaultMaxBytes,
		GraphConcurrency: 2, GraphQueue: 16,
	}
}

// maxBodyBytes bounds the body of a POST request.
const maxBodyBytes = 64 << 10

type handler struct {
	b     Daemon
	o     Options
	log   *slog.Logger
	token [sha256.Size]byte

	// Renderings of the GET endpoints that show the whole status.
	statusBody, pageBody cache[[]byte]
	metricsFamilies      cache[[]*dto.MetricFamily]

	graphs graphGate
}

// NewHandler returns the admin interface over b: the endpoints listed in the
// package doc. Zero fields of o take their defaults (Listen is not used).
// It starts no goroutines.
func NewHandler(b Daemon, o Options) http.Handler {
	o = withDefaults(o)
	h := &handler{b: b, o: o, log: o.Logger, token: sha256.Sum256([]byte(o.Token)),
		graphs: newGraphGate(o.GraphConcurrency, o.GraphQueue)}
	h.statusBody = cache[[]byte]{maxAge: o.StatusMaxAge, now: o.Now}
	h.pageBody = cache[[]byte]{maxAge: o.StatusMaxAge, now: o.Now}
	h.metricsFamilies = cache[[]*dto.MetricFamily]{maxAge: o.StatusMaxAge, now: o.Now}
	g := o.Metrics
	if g == nil {
		reg := prometheus.NewRegistry()
		reg.MustRegister(NewCollector(b, o.Now))
		g = reg
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", h.page)
	mux.HandleFunc("GET /status", h.status)
	mux.Handle("GET /metrics", metricsHandler(g, &h.metricsFamilies, o.Logger))
	mux.HandleFunc("GET /graph/{file}", h.graph)
	mux.HandleFunc("GET /graph", h.graphByKey)
	mux.HandleFunc("GET /device/{target}", h.device)
	mux.Handle("POST /flush", h.auth(h.flush))
	mux.Handle("POST /loader", h.auth(h.loader))
	if o.Profiling {
		mux.Handle("GET /debug/pprof/", h.tokenOnly(pprof.Index))
		mux.Handle("GET /debug/pprof/cmdline", h.tokenOnly(pprof.Cmdline))
		mux.Handle("GET /debug/pprof/profile", h.tokenOnly(pprof.Profile))
		mux.Handle("GET /debug/pprof/symbol", h.tokenOnly(pprof.Symbol))
		mux.Handle("GET /debug/pprof/trace", h.tokenOnly(pprof.Trace))
	}
	cop := http.NewCrossOriginProtection()
	return securityHeaders(cop.Handler(mux))
}

func withDefaults(o Options) Options {
	d := DefaultOptions()
	if o.Listen == "" {
		o.Listen = d.Listen
	}
	if o.Refresh <= 0 {
		o.Refresh = d.Refresh
	}
	o.Refresh = max(o.Refresh, time.Second)
	if o.PageGraphSpan <= 0 {
		o.PageGraphSpan = d.PageGraphSpan
	}
	if o.PageGraphs <= 0 {
		o.PageGraphs = d.PageGraphs
	}
	if o.DeviceRows <= 0 {
		o.DeviceRows = d.DeviceRows
	}
	if o.GraphTimeout <= 0 {
		o.GraphTimeout = d.GraphTimeout
	}
	if o.FlushTimeout <= 0 {
		o.FlushTimeout = d.FlushTimeout
	}
	if o.GraphMaxDS <= 0 {
		o.GraphMaxDS = d.GraphMaxDS
	}
	o.GraphMaxDS = min(o.GraphMaxDS, MaxGraphDS)
	if o.GraphMaxBytes <= 0 {
		o.GraphMaxBytes = d.GraphMaxBytes
	}
	if o.GraphConcurrency <= 0 {
		o.GraphConcurrency = d.GraphConcurrency
	}
	if o.GraphQueue == 0 {
		o.GraphQueue = d.GraphQueue
	}
	o.GraphQueue = max(o.GraphQueue, 0)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

// auth requires the bearer token, if one is set, and bounds the body.
func (h *handler) auth(next http.HandlerFunc) http.Handler {
	return h.tokenOnly(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		next(w, r)
		h.statusBody.reset()
		h.pageBody.reset()
		h.metricsFamilies.reset()
	})
}

// tokenOnly serves next only to a request with the bearer token, when one
// is set.
func (h *handler) tokenOnly(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if h.o.Token != "" && !h.tokenOK(r.Header.Get("Authorization")) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="spoold"`)
			httpError(w, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		next(w, r)
	}
}

// tokenOK compares the header's token in constant time (over fixed-length
// digests, so the token's length does not leak either).
func (h *handler) tokenOK(header string) bool {
	scheme, tok, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(got[:], h.token[:]) == 1
}

// snapshot returns the daemon's status with Now filled in.
func (h *handler) snapshot() Status {
	s := h.b.Status()
	if s.Now.IsZero() {
		s.Now = h.o.Now()
	}
	return s
}

func (h *handler) status(w http.ResponseWriter, r *http.Request) {
	body, err := h.statusBody.get(func() ([]byte, error) {
		b, err := json.MarshalIndent(h.snapshot(), "", "  ")
		return append(b, '\n'), err
	})
	if err != nil {
		h.log.Error("encode status JSON", "err", err)
		httpError(w, http.StatusInternalServerError, "encode status JSON")
		return
	}
	writeBody(w, http.StatusOK, "application/json", body)
}

func (h *handler) graph(w http.ResponseWriter, r *http.Request) {
	target, ok := strings.CutSuffix(r.PathValue("file"), ".png")
	if !ok || !ValidTargetName(target) || r.URL.Query().Has("key") {
		httpError(w, http.StatusNotFound, "no such graph: want /graph/<configured target>.png or /graph?key=<key>")
		return
	}
	h.serveGraph(w, r, target)
}

// graphByKey serves /graph?key=<target or target/instance>&template=...
func (h *handler) graphByKey(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	if !ValidGraphKey(key) {
		httpError(w, http.StatusBadRequest, (&GraphQueryError{"key", key, "want a target name or a row key <target>/[<subdir>/]<instance>"}).Error())
		return
	}
	h.serveGraph(w, r, key)
}

func (h *handler) serveGraph(w http.ResponseWriter, r *http.Request, key string) {
	q := r.URL.Query()
	o, err := ParseGraphQuery(q, h.o.Now())
	if err == nil && len(o.DS) > h.o.GraphMaxDS {
		err = &GraphQueryError{"ds", strings.Join(o.DS, ","), fmt.Sprintf("more than %d data sources (--graph-max-ds)", h.o.GraphMaxDS)}
	}
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	o.Title, o.MaxDS, o.MaxBytes = key, h.o.GraphMaxDS, h.o.GraphMaxBytes
	if name := q.Get("template"); name != "" {
		if o.Template, o.Vars, err = h.b.GraphTemplate(key, name); err != nil {
			h.graphError(w, key, r.Context(), err)
			return
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.o.GraphTimeout)
	defer cancel()
	release, err := h.graphs.enter(ctx)
	if err != nil {
		h.log.Warn("graph refused", "target", key, "err", err)
		w.Header().Set("Retry-After", strconv.Itoa(graphRetryAfter))
		httpError(w, http.StatusServiceUnavailable, "graph of "+quote(key)+" refused: "+err.Error())
		return
	}
	defer release()
	png, err := h.b.Graph(ctx, key, o)
	if err != nil {
		h.graphError(w, key, ctx, err)
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(png)
}

// graphError answers a failed graph. Only a failure of the daemon is logged
// at ERROR, and no body carries the error's text unless the writer made it
// for clients (graph.ErrNoDataSource, graph.ErrTooLarge): other errors name files.
func (h *handler) graphError(w http.ResponseWriter, target string, ctx context.Context, err error) {
	switch {
	case errors.Is(err, ErrUnknownTarget):
		httpError(w, http.StatusNotFound, "unknown target "+quote(target))
	case errors.Is(err, ErrUnknownTemplate):
		httpError(w, http.StatusNotFound, "no such graph template for "+quote(target))
	case errors.Is(err, graph.ErrNoDataSource), errors.Is(err, graph.ErrTooLarge):
		h.log.Debug("graph refused", "target", target, "err", err)
		httpError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, fs.ErrNotExist):
		h.log.Debug("graph of a target without an RRD file", "target", target, "err", err)
		httpError(w, http.StatusNotFound, "no RRD file for target "+quote(target)+" yet: nothing has been written for it")
	case ctx.Err() != nil:
		h.log.Warn("graph timed out", "target", target, "err", err)
		httpError(w, http.StatusServiceUnavailable, "graph of "+quote(target)+" timed out")
	default:
		h.log.Error("graph failed", "target", target, "err", err)
		httpError(w, http.StatusInternalServerError, "graph of "+quote(target)+" failed; the daemon's log has the details")
	}
}

func (h *handler) flush(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), h.o.FlushTimeout)
	defer cancel()
	start := time.Now()
	err := h.b.FlushAll(ctx)
	elapsed := time.Since(start).Seconds()
	if err != nil {
		h.log.Error("flush failed", "err", err)
		writeJSON(w, http.StatusInternalServerError, map[string]any{
			"flushed": false, "error": err.Error(), "duration_seconds": elapsed})
		return
	}
	// Orphans are reported on their own: their entries wait for a profile,
	// and everything else was flushed.
	orphans := h.b.Orphans()
	if orphans == nil {
		orphans = []string{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"flushed": true, "duration_seconds": elapsed,
		"orphans": orphansDoc{Count: len(orphans), Targets: orphans}})
}

// writeJSON writes v as indented JSON with status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		httpError(w, http.StatusInternalServerError, "encode JSON: "+err.Error())
		return
	}
	writeBody(w, code, "application/json", append(b, '\n'))
}

// writeBody writes a rendered, uncacheable response.
func writeBody(w http.ResponseWriter, code int, contentType string, body []byte) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(body)
}

// httpError writes a plain-text error message.
func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Del("Content-Type")
	http.Error(w, msg, code)
}

// quote quotes a name for a plain-text message.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
