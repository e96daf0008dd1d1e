// Package admin owns spoold's admin HTTP interface: a JSON status document,
// a Prometheus exposition (client_golang), on-demand RRD graphs, an operator's HTML page
// that refreshes itself, and two live controls (flush everything, retune the
// loader).
//
// The daemon supplies the data through the Daemon interface; this package
// only reads Daemon.Status snapshots and forwards the requests it has
// validated. Nothing taken from a URL ever becomes a file path: a graph's
// target name is checked for syntax here (see ValidTargetName) and then only
// looked up by the Daemon among the configured targets.
//
// # Endpoints
//
//	GET  /                  HTML page: state at a glance, targets, graphs
//	GET  /status            JSON (see Status.MarshalJSON)
//	GET  /metrics           Prometheus exposition (promhttp): spoold_ metrics
//	                        (NewCollector) and the registry's others
//	GET  /graph/{target}.png?ds=&range=&start=&end=&width=&height=&template=
//	GET  /graph?key=&template=&range=&start=&end=&width=&height=
//	                        key: a target or a table row <target>/<instance>
//	GET  /device/{target}?template=&page=&range=&start=&end=
//	                        a device's own graphs and its rows (name, alias,
//	                        state), each with a graph of the template chosen,
//	                        all over the range chosen (links day, week,
//	                        month, year; a form for start and end);
//	                        Options.DeviceRows rows a page, graphs loaded as
//	                        they scroll into view (page.js), 3 at a time
//	POST /flush             write every pending entry now
//	POST /loader            change loader_files, loader_sleep,
//	                        loader_threshold, loader_cpu while it runs
//	GET  /debug/pprof/...   Go's runtime profiles (net/http/pprof), only
//	                        with Options.Profiling, behind the Token
//
// Graph parameters (all optional; see ParseGraphQuery):
//
//	ds      data source names, comma-separated or repeated ([A-Za-z0-9_]{1,19},
//	        at most 32); none means every data source
//	template a graph template of the key (Daemon.GraphTemplate: a built-in
//	        or a profile's, graph.Template); not with ds
//	range   day, week, month or year: start is end - 1, 7, 31 or 366 days
//	        (GraphRanges); not with start
//	start   unix seconds, "now", or a negative offset from now: "-6h", "-90m",
//	        "-2d", "-1w" (s, m, h, d, w and Go durations such as "-1h30m");
//	        default end - 1 day
//	end     same forms; default now
//	width   100..2000 pixels of the drawing area, default 600
//	height  50..1000 pixels, default 200
//
// GET and HEAD requests are open to whoever reaches the listener (by default
// 127.0.0.1 only). When Options.Token is set, the POST endpoints require
// "Authorization: Bearer <token>", and so do the profiles; cross-origin browser POSTs are refused in
// any case (net/http.CrossOriginProtection), so a web page the operator visits
// cannot flush or retune the daemon.
//
// # Goroutines
//
// NewHandler starts none. A Server owns the goroutines of its http.Server:
// one that accepts connections (started by Start, ended by Shutdown, which
// waits for it) and one per open connection, which net/http runs and
// Shutdown drains.
package admin
