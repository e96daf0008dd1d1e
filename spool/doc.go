// Package spool owns the on-disk spool: the binary entry format (v2; v1 is
// read), segments (a file of one key's entries, appended by the process
// that created it until Seal, a size or entry limit, or the next start:
// append.go), the leveled directory layout named after nginx's
// proxy_cache_path levels=, the atomic publication of drop-ins (temp file +
// rename, never replacing a file), reads that keep every good entry around
// bad bytes (segment.go), the quarantine for bad files and byte ranges
// (quarantine.go), and the flock that keeps a second process off a spool directory.
//
// A spool directory looks like this (levels "1:2"):
//
//	<dir>/SPOOLD                        the marker: format and levels
//	<dir>/lock                          flock(2)ed by the owning process
//	<dir>/tmp/<pid>.<hex nanos>.<seq>   entries being written; never indexed
//	<dir>/quarantine/                   bad entries, each with a .reason file
//	<dir>/c/29/<hash16>-<unixseconds>   a segment: one or more poll results of one key
//
// The hash is xxhash64 of the entry's key (its target name) in 16 lower-case
// hex digits; the level directories are taken from the end of that hex, as
// nginx does. The name alone tells the loader the entry's hash and timestamp,
// so indexing needs neither open(2) nor stat(2).
//
// Open takes a directory for a spool only when it carries the marker, is
// empty, or is a spool made before the marker (root.go); it reaches every
// fixed member relative to the spool directory's descriptor without
// following symlinks (fixed.go), and every segment and level directory
// after is opened beneath that descriptor through no symlink (beneath.go):
// no method takes a path to open. RemoveStaleTemp removes only temp files
// whose names spoold makes (tempname.go).
//
// Package spool starts no goroutines. A *Spool is safe for concurrent use.
// Nothing in this package deletes a segment except Remove, which the caller
// calls only after its values are safely elsewhere (and Append, which takes
// back a segment it created when the first write into it failed).
package spool
