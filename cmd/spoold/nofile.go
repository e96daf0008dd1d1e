package main

import (
	"golang.org/x/sys/unix"

	"github.com/spoold/spoold/spool"
)

// defaultSegmentOpenFiles is --segment-open-files' default: half the
// process's open-files limit (a Go program raises its soft limit to the
// hard one at start), so that each key polled between two writes of its
// file keeps its open segment's descriptor, and an append is one write;
// the other half is left to the poller's sockets, the writers' files and
// the protocol's clients.
func defaultSegmentOpenFiles() int {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return spool.DefaultOptions().SegmentOpenFiles
	}
	return int(min(lim.Cur/2, spool.MaxSegmentOpenFiles))
}
