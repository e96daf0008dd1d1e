// Package diskstat reads the kernel's block-device and per-task I/O
// counters: it finds the block device behind a directory (and the disk
// that owns a partition, for its queue settings such as read_ahead_kb),
// reads /proc/diskstats and computes from two samples what `iostat -x`
// shows (reads/s, writes/s, r_await, w_await, %util), and reads
// /proc/self/io, /proc/thread-self/io and /proc/vmstat.
//
// /proc/diskstats and /proc/self/io are parsed by
// github.com/prometheus/procfs; /proc/thread-self/io, which procfs does not
// offer, and /proc/vmstat by this package's parsers, which take an
// io.Reader so they are tested from fixtures. The Read* functions open the
// real files. OnThread measures the storage I/O of one operation on its
// own OS thread (getrusage's block counts); Load is the always-on report
// the daemon shows (devices, process, poll cycles, RRD updates), sampled by
// Load.Run on the caller's goroutine. Package diskstat starts no goroutines
// and keeps no state. A caller that samples periodically keeps the previous
// Sample (or uses a Watcher).
package diskstat
