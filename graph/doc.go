// Package graph owns spoold's graphs: templates (Template: DEF, CDEF,
// VDEF, AREA, LINE, GPRINT, HRULE, COMMENT; the built-ins of builtin.go,
// or a profile's "graph" block parsed by ParseTemplate), the checks a
// template passes before librrd sees it (its RPN in rpn.go, its bounds),
// the choice of the templates that fit a key's file (ForKey), and drawing
// (Options.Draw): which data sources a graph may fetch at what cost
// (cost.go, select.go), the template rendered as rrd_graph's arguments
// (render.go), a range without a known value drawn as "no data yet"
// (nodata.go), and the call through package rrd.
//
// A template names data sources only: every DEF is of the key's own file,
// and its texts are escaped when it is rendered into librrd's arguments,
// so no template reads another file. Its DEFs count against
// Options.MaxDS and MaxBytes.
//
// Draw reads the file; the caller keeps it still and current
// (rrdwriter.Writer.Graph flushes the key and holds the file's lock while
// Draw runs). Package graph starts no goroutines.
package graph
