// Package loader owns the throttled walk of the spool tree into the
// in-memory index, after nginx's cache loader
// (ngx_http_file_cache_loader / ngx_http_file_cache_manage_file).
//
// The walk of the tree is spool.TreeWalker's, which spool.CountFiles (the
// doctor's count of a spool) shares. It reads directory entries only, with getdents(2) into a
// reused buffer: an entry's hash and poll time come from its file name, so no entry
// file is ever opened or stat(2)ed (an lstat is made only for a directory
// entry whose d_type is DT_UNKNOWN, on file systems that do not fill it in).
// Level directories are walked in sorted order, so the position of the
// current leaf directory among all possible leaves is the fraction of the
// hash space covered: that is the progress and the base of the ETA.
//
// Nothing is ever deleted. A file that does not belong (a bad name, an entry
// in the wrong level directory, a file at an intermediate level or at the
// root) is moved to quarantine/ with a reason; an unknown directory is
// logged, counted as foreign and left alone; an entry the index has no room
// for (Indexer.Add fails and Indexer.Full says the index is full) stays on disk for a later
// rescan. The only files removed are the stale temp files of a crashed
// earlier writer, by the names spoold makes (spool.Spool.RemoveStaleTemp),
// which were never acknowledged. Options.DryRun removes and moves nothing.
//
// # Throttle
//
// With Params.CPU == 0 the loader behaves exactly as nginx's: after each
// file it counts, if the iteration has reached Params.Files files, or else
// if Params.Threshold has passed since the iteration began, it sleeps
// Params.Sleep and begins a new iteration. Params.Sleep == 0 runs
// unthrottled (no pause at all; iterations are still counted).
//
// With Params.CPU > 0 (--loader-cpu) the operator states a share of one core
// instead: Files and Sleep are not used. After an iteration that used c of
// thread CPU time over w of wall time, the loader pauses max(0, c/CPU - w),
// so that over iteration plus pause its CPU share is the target. The next
// iteration's size in files is steered so that an iteration uses about 20ms
// of CPU (halfway from the current size to the estimate, clamped to
// [1, 1e6]); Threshold still cuts an iteration that takes too long (a cold
// page cache). CPU is measured with getrusage(RUSAGE_THREAD) on the OS thread
// Run locks itself to.
//
// Parameters can be changed while Run is going (SetParams); they take
// effect at the throttle check after the file in hand. Stats can be read at
// any time from any goroutine.
//
// # Rescans
//
// Loader.Rescans is the daemon's loop: a walk at start, then one
// Options.RescanInterval after each walk ended, and one as soon as an index
// that refused entries has room for them again (WalkIndex.RoomAgain); keys
// the index holds for refused entries are released after a walk without
// errors only.
//
// Goroutines: Run and Rescans do their work on the caller's goroutine, Run
// locked to its OS thread for the duration of the walk; EnsureLeaf and EnsureAll walk on
// their callers' goroutines. The one goroutine the package starts lives
// for one throttle pause: it ends the pause early when SetParams changes
// the parameters, and it has ended when the pause returns.
package loader
