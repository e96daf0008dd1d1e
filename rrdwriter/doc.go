// Package rrdwriter owns the second stage of spoold: it takes the pending
// entries of each target from the index (package shm), reads them from the
// spool, writes all of a target's values into its RRD file in one librrd
// update call, and removes the entries only after librrd accepted them. It
// also creates RRD files with their key's layout (Options.Layout, an
// rrd.Layout) and keeps a file still and current while a graph is drawn.
//
// # Flush policy
//
// Like rrdcached, a target is written WriteDelay (-w) after its oldest
// pending entry arrived, plus a jitter of up to WriteJitter (-z) that is
// pseudo-random per target and batch, so that the writes of targets polled
// together spread out. At most Writers files are written at once and at most
// WriteRate files start per second. FlushKey (before a graph) and FlushAll
// (at shutdown) bypass delay, jitter, rate and backoff.
//
// # Exactly once
//
// The RRD file's last update time is read lazily, once per file, and cached.
// Entries at or before it were applied before (a crash between update and
// removal): they are removed without being applied again. librrd applies the
// rows of one update in order and stops at the first one it rejects; the
// writer then re-reads the last update, removes the entries that landed,
// quarantines the rejected entry with librrd's message and retries the rest.
// Target-level failures (permission, full disk, corrupt RRD file, profile
// mismatch) keep every entry and back the target off exponentially; other
// targets go on.
//
// # Forwarding
//
// With Options.Forward the RRD implementation is a client of a remote
// rrdcached or spoold (forward.go): a batch goes as UPDATEs, then FLUSH,
// and counts as applied only when the remote file's last update (INFO,
// after the FLUSH) shows it; the exactly-once rule above is the same code
// for both. While the peer is down its targets fail as KindRemote and back
// off; their entries stay in the spool.
//
// # Files
//
// A target's RRD file is Options.Dir + RRDPath(key): bytes outside
// [A-Za-z0-9._-] are escaped, "/" separates subdirectories only when every
// segment is non-empty, and no segment can be "." or "..". Missing
// directories are created. A key of the rrdcached protocol, "/" + a clean
// relative file name, is Options.Dir + that name verbatim (ProtocolKey).
//
// # The rrdcached protocol
//
// Package rrdcached/spoolbackend carries out the protocol's commands. Its
// updates are spooled and indexed as poll results are, and written here
// like them, exactly once. It takes of the writer what its Writer
// interface names: FlushKey (FLUSH), StartFlushAll (FLUSHALL), Hold and
// Release (SUSPEND, RESUME), LockFile and FileReplaced (its librrd calls
// under the file's lock: FIRST, INFO, FETCH, CREATE) and Written (STATS).
//
// # Graphs
//
// Package graph draws: Graph flushes the key, holds its file's lock and
// calls the drawing function it is given (graph.Options.Draw) with the
// file's path and header, so a graph never overlaps an update and is
// current.
//
// # Concurrency
//
// Goroutines, and what each does:
//   - Run's loop (the daemon's writer goroutine): every Tick, and when a
//     writer slot frees, it takes due batches and starts one file
//     goroutine for each, at most Writers at once; it returns after they
//     end.
//   - File goroutines (Run's, FlushAll's): each reads one batch's
//     segments, updates its file under the file's lock and hands the
//     applied segments to the removal stage.
//   - FlushKey and Graph run on the caller's goroutine; StartFlushAll
//     starts one that runs FlushAll (WaitFlushes waits for it).
//   - The removal stage's lanes (removal.go), one goroutine for each of
//     Writers lanes while it has work: each makes the files durable as
//     --rrd-fsync asks (durable.go), removes the applied segments, then
//     ends the batch, so a FLUSH's values leave the spool only once
//     durable. Run and FlushAll wait for the removals of what they applied
//     before they return, FlushKey does not (the key stays in flight until
//     they are done: WaitKey).
//   - A flush's read-ahead (prefetch.go): Writers/2 goroutines that
//     prefetch the files the flush's writers take next.
//
// State, and who owns it:
//   - Every key's write state (in flight, last error and backoff, held,
//     stuck, and the rate of file starts) is one table with one owner at
//     a time: a function handed to own (owner.go). Nothing run there
//     waits for I/O; the goroutines above do the I/O and report back.
//   - A file's cached header and geometry (fileState) are read and changed
//     under its file lock, by the goroutine doing I/O on the file; the
//     lock also keeps updates and graph reads of one file from
//     overlapping (librrd's fcntl lock does not protect goroutines of one
//     process from each other).
//   - The index (package shm) owns each key's pending times and backoff,
//     and the spool its segments and the names a batch keeps (SealNames);
//     the writer's take and end run inside own.
//
// Package rrd owns the file format and calls librrd, and opens every RRD
// file beneath an rrd.Root of the RRD directory; the writer talks to the
// RRD interface (LibRRD: the Root's methods), so the policy is tested with
// a fake. The RRD carries its Root, through which the writer's own reads
// (prefetch, sync, graphs) open the files too. The last update and data
// sources of a file are read from its header in Go once per file: by the
// native update itself, which plans the entries from them under its lock
// (InfoUpdater: one open and one header read for both), or else by
// Root.Info (one pread) before the update; librrd's rrd_info_r reads the
// files that reader does not recognize. The prefetch
// (prefetch.go) keeps the geometry (rrd.Geometry) of each file it found out
// of the page cache and moves it on with every update librrd accepts, so
// the header is not read again before each update; a file found cached
// keeps none.
package rrdwriter
