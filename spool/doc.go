// Package spool owns the on-disk spool: the binary entry format (v1), the
// leveled directory layout named after nginx's proxy_cache_path levels=, the
// atomic publication of entries (temp file + rename, fsync by policy),
// verified reads, the quarantine for bad entries, and the flock that keeps a
// second process off a spool directory.
//
// A spool directory looks like this (levels "1:2"):
//
//	<dir>/SPOOLD                        the marker: format and levels
//	<dir>/lock                          flock(2)ed by the owning process
//	<dir>/tmp/<pid>.<hex nanos>.<seq>   entries being written; never indexed
//	<dir>/quarantine/                   bad entries, each with a .reason file
//	<dir>/c/29/<hash16>-<unixseconds>   one poll result
//
// The hash is xxhash64 of the entry's key (its target name) in 16 lower-case
// hex digits; the level directories are taken from the end of that hex, as
// nginx does. The name alone tells the loader the entry's hash and timestamp,
// so indexing needs neither open(2) nor stat(2).
//
// Open takes a directory for a spool only when it carries the marker, is
// empty, or is a spool made before the marker (root.go); it reaches every
// fixed member relative to the spool directory's descriptor without
// following symlinks (fixed.go); RemoveStaleTemp removes only temp files
// whose names spoold makes (tempname.go).
//
// Package spool starts no goroutines. A *Spool is safe for concurrent use.
// Nothing in this package deletes an entry except Remove, which the caller
// calls only after the entry's values are safely elsewhere.
package spool
