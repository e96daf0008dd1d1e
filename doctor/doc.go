// Package doctor looks at the machine spoold runs on and reports, for the
// spool and RRD directories, what the field reports behind spoold taught to
// look at: the block device and its read-ahead, the mount options (atime
// mode, ext4 commit= and data=), free space and inodes, the open-files limit
// against the configured concurrency, whether the daemon confines its file
// access with Landlock, the spool's size and the loader time
// the loader_* settings imply for it, and a measured figure: the bytes read
// from storage and the pages written back for one RRD update on a sample
// file with a cold page cache.
//
// The doctor imports none of the daemon's packages: Options carry the
// daemon's settings as values, and the functions that count the spool
// (spool.CountFiles), estimate the loader's time (loader.Params.EstimateLoad),
// check the RRD directory (rrdwriter.CheckDir) and create and update the
// sample file (librrd) are passed in by the daemon's wiring (cmd/spoold).
//
// Each Finding has a severity (ok or warn), what was found, why it matters
// and the exact command that changes it. Run changes nothing but a sample
// RRD file in a temporary directory under Options.RRDDir, which it removes.
//
// Package doctor starts no goroutines. The measurement locks the calling
// goroutine to its OS thread while it runs, to read that thread's I/O
// counters (/proc/thread-self/io).
package doctor
