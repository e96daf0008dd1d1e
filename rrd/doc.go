// Package rrd owns the RRD file format: the schema of a file (Layout, its
// data sources and their types, DefaultRRAs), the path of a key's file
// (RRDPath, ProtocolKey), the formatting of values as librrd's arguments
// take them, a Go reader of the header and the librrd calls, and the rule
// by which every RRD file is opened: beneath the RRD directory's
// descriptor (OpenBeneath), librrd handed "/proc/self/fd/N" of the
// confined descriptor. The package is the only code that opens RRD files,
// and it offers no open by path string: every operation on a file is a
// method of Root (Create, CreateFrom, Info, ReadHeader, ReadRRAs, Update,
// First, Fetch, InfoItems, Graph, OpenHeader, OpenNoAtime, Open), and
// HeaderCache, the native path's header cache, takes its Root when it is made.
//
// librrd.go is the only file of spoold that imports "C": one shim per
// librrd call and no logic, as Go's os/user keeps its cgo calls in one
// small file; librrd_nocgo.go stands in for it without cgo (every call
// fails), so the rest of the package is built and tested without cgo,
// the header reader included.
//
// format.go is the one reader of the on-disk layout (the header, the
// live head, the rows), which the header, geometry and archive readers and
// the native update are built on. The native update path (native*.go,
// File, HeaderCache) applies updates in Go and writes exactly the bytes librrd
// 1.7.2 (Debian's librrd8) writes for the same update, for the data
// source types and archives it knows, under librrd's lock; anything else
// is a *NotNativeError before anything is written, and librrd does the
// update. Differential tests and FuzzNativeUpdate hold it to librrd's
// bytes.
//
// librrd's fcntl lock does not protect goroutines of one process from each
// other: callers must not run two calls on one file at once (the writer
// holds a lock per file). Package rrd starts no goroutines.
package rrd
