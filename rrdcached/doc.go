// Package rrdcached speaks rrdcached's line protocol: a server (listeners on
// unix and TCP sockets, per-listener permissions, limits, BATCH) that hands
// commands to a Backend, and a client used to forward updates to a remote
// rrdcached or spoold.
//
// # The server
//
// Server answers as rrdcached 1.7 does (src/rrd_daemon.c and rrdcached(1),
// "PROTOCOL"), byte for byte where the backend can: fields split on single
// spaces or NUL bytes with backslash escapes (ParseCommand), command words
// in any case, status lines "<n> <message>" where n is the number of lines
// after it and -1 an error, BATCH's go-ahead, its per-command errors
// numbered as rrdcached numbers them (the batch's nth line), and each
// command's wording. TestConformance sends internal/testing/rrdctest's script to
// Debian's rrdcached and to a Server and compares the replies.
//
// File names are resolved beneath the RRD directory as rrdcached -b DIR -B
// does, and stricter (see PathResolver): a Backend only ever sees clean names
// relative to it.
//
// Where spoold differs from rrdcached, on purpose:
//
//   - FORGET keeps the file's acknowledged updates (they are spooled and
//     will be written) and says how many in its reply: "0 Gone! (N
//     acknowledged update(s) kept: spoold still writes them)".
//   - A TCP listener without a permission list accepts only ReadCommands
//     (rrdcached allows everything on every socket, with no authentication).
//   - Limits rrdcached lacks: Options.MaxLine (rrdcached closes such a
//     connection without a word; spoold answers "-1 Line too long" first),
//     MaxBatch, MaxBatchErrorBytes, MaxFetchBytes, MaxFetches, MaxConns
//     (and ListenerOptions.MaxConns), IdleTimeout, WriteTimeout. Each refusal is answered where the protocol allows, is
//     counted in spoold_rrdcached_refusals_total{reason} and logged at most
//     once per Options.LogInterval and reason, naming the peer (its address,
//     or its pid and uid on a unix socket).
//   - A BATCH's consecutive UPDATEs of one file reach the Backend as one
//     Update call (batchupdate.go); each command's reply is still its own.
//     An UPDATE of no values among them is answered "No values updated."
//     without asking the Backend.
//   - SUSPEND or RESUME of a file not in the cache: rrdcached answers
//     "-1 <file> - No such file or directory" and closes the connection;
//     spoold answers the same and keeps it open.
//   - Names rrdcached accepts but resolves outside its directory (a symlink
//     out of it) are refused: "-1 <file>: Permission denied". PENDING,
//     SUSPEND and RESUME check names too (rrdcached does not).
//   - LIST with a glob ('*', '?') answers "-1 List <dir>: Operation not
//     supported" (rrdcached expands it with glob(3)).
//   - FETCH's "field X not found in <file>" names the file (rrdcached
//     prints freed memory there).
//
// # Goroutines
//
// New starts one goroutine per listener, accepting until Close, and each
// accepted connection runs in its own goroutine until the client leaves,
// a limit or timeout ends it, or Close. Close stops accepting, lets each
// connection finish the command it is carrying out and send its reply
// (canceling the command's Backend call after Options.ShutdownGrace; one
// goroutine waits for the connections meanwhile), and returns when every
// one of these goroutines has ended.
package rrdcached
