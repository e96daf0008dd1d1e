// Package spoolbackend is spoold's rrdcached.Backend: it carries out the
// commands of package rrdcached's server on spoold's spool, index and RRD
// writer, through the narrow interfaces it declares (Writer, Spool, Index,
// LeafWalker), which *rrdwriter.Writer, *spool.Spool, *shm.Index and
// *loader.Loader satisfy. RRD files are read and created through package
// rrd.
//
// # Updates
//
// An UPDATE (update.go) is parsed against the file's data sources, read
// from its header (a stat per command; the header again when the file
// changed), and typed by them so that librrd gets what the client sent;
// one that cannot be written is refused in the reply, where rrdcached
// would accept it and drop it at its flush: a value count other than the
// file's data sources, a time at or before the file's newest update
// (written or spooled, to the millisecond), a time beyond
// Options.FutureTolerance, a missing file, a poller target's file
// (Options.Claimed). An accepted update is appended to the spool and
// indexed (intake.Intake) before Update returns (with the batch fsync
// policy the spool is synced first, one sync shared by the Updates waiting
// at once), then written by the writer like a poll result. A protocol key
// has no profile: a missing file keeps its entries spooled
// (rrdwriter.KindNoProfile) until it exists.
//
// # The other commands
//
// FLUSH is Writer.FlushKey; FLUSHALL starts Writer.StartFlushAll; PENDING
// reads the spooled entries without taking them; FORGET keeps them;
// SUSPEND holds a key (Writer.Hold: the writer does not write it, its
// updates still spool) (queue.go). FIRST, INFO, FETCH and CREATE call
// librrd under the writer's lock of the file (Writer.LockFile), INFO and
// FETCH after a flush. A FETCH whose values, estimated from the file's
// header (rrd.FetchRows), exceed the server's bound is refused before
// librrd reads a row. CREATE publishes through a temp file, refuses to
// replace a file with updates still spooled, and says "No space left on
// device" where librrd fails on a full file system without a message.
// LIST never follows a symlink out of Options.Dir (files.go).
//
// # Concurrency
//
// A Backend starts no goroutine; its methods run on the server's
// connection goroutines, concurrently. The updates of one file are
// ordered by a lock of the file's (the check of their times and their
// appends); FLUSHALL's flush runs on a goroutine of the writer's, which
// the daemon's shutdown waits for (rrdwriter.Writer.WaitFlushes).
//
// # Metrics
//
// NewCollector exposes BackendStats: the updates received, spooled and
// refused by reason, and the commands that change no file.
package spoolbackend
