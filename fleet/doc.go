// Package fleet owns the configuration of what is polled: the targets and
// profiles files (docs/configuration.md, docs/profiles.md: their grammar, parsers and
// errors, each a *ConfigError naming the file and line), the built-in
// profiles, the tables of profiles as configured (index, instance,
// filters, columns), the profiles' graph blocks, the key model (which key
// and RRD file each target and table row has, and the data sources and
// RRD layout of a key), the shards of a fleet polled by several
// instances, and the generation a reload (SIGHUP) builds and swaps in
// whole. The poller polls what it says; the writer creates files with the
// layouts it gives; the data-source type is package rrd's.
//
// # Keys
//
// A key is an RRD file. A profile's scalars ("ds" lines) go to the
// target's own key, the target name. Each row of a profile's table
// ("table" blocks) is its own key: RowKey(target, segment),
// "target/segment", or "target/subdir/segment" for a table with a subdir
// line (Table.RowKey); segment is InstanceSegment of the row's instance
// name (ifName, ifDescr, ifAlias, any column, or the index), a one-to-one
// escape into [A-Za-z0-9._-] that rrd.RRDPath keeps as it is, so the file
// is <rrd-dir>/<target>/<segment>.rrd. Identity follows the instance
// name, not the index. key.go states the mapping, its empty-name and
// collision rules (RowSegments); Target.KeyDS gives a key's data sources
// and Target.RRDLayout its layout (Generation.Layout is what the writer's
// Options.Layout takes); SplitKey and InstanceName take a key apart. No
// key of this model starts with "/" (those belong to rrdcached-protocol
// clients).
//
// Every file the package reads (targets, profiles, "file:" secrets) must
// be a regular file, or a symlink to one, of bounded size.
//
// A parsed Profile, Table, Target and Generation are immutable; Current
// holds the generation in use, safe for concurrent use. The package
// starts no goroutines.
package fleet
