// Package rrd owns the RRD file format: the schema of a file (Layout, its
// data sources and their types, DefaultRRAs), the path of a key's file
// (RRDPath, ProtocolKey), the formatting of values as librrd's arguments
// take them, a Go reader of the header (ReadHeader, ReadGeometry) and the
// librrd calls (Create, Info, Update, First, Fetch, Graph), and the rule
// by which every RRD file is opened: beneath the RRD directory's
// descriptor (Root, OpenBeneath), librrd handed "/proc/self/fd/N" of the
// confined descriptor.
//
// librrd.go is the only file of spoold that imports "C": one shim per
// librrd call and no logic, as Go's os/user keeps its cgo calls in one
// small file; librrd_nocgo.go stands in for it without cgo (every call
// fails), so the rest of the package is built and tested without cgo,
// the header reader included.
//
// librrd's fcntl lock does not protect goroutines of one process from each
// other: callers must not run two calls on one file at once (the writer
// holds a lock per file). Package rrd starts no goroutines.
package rrd
