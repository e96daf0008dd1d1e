package doctor

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// nofileMargin covers what is open besides polls and writers: the
// listening sockets, log files, directories of the loader's walk, the
// Go runtime's own descriptors.
const nofileMargin = 64

func checkNofile(r *Report, o Options) {
	need := uint64(o.PollConcurrency + 2*o.Writers + o.SegmentOpenFiles + nofileMargin)
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		r.add(Finding{Check: "nofile", Severity: Warn, Found: fmt.Sprintf("getrlimit(RLIMIT_NOFILE): %v", err)})
		return
	}
	f := Finding{Check: "nofile", Severity: OK,
		Found: fmt.Sprintf("open-files limit %d (hard %d); spoold needs about %d: %d polls + 2 × %d writers + %d held segments + %d",
			lim.Cur, lim.Max, need, o.PollConcurrency, o.Writers, o.SegmentOpenFiles, nofileMargin),
		Why: "each poll in flight holds a UDP socket, each writer an RRD file and a spool entry, each open spool segment up to --segment-open-files its descriptor; past the limit polls fail with EMFILE (a Go program raises its soft limit to the hard one at start, so the hard limit is what counts)",
		Fix: fmt.Sprintf("ulimit -n %d   # in the shell that starts spoold, or LimitNOFILE=%d in its systemd unit", need, need)}
	if lim.Cur < need {
		f.Severity = Warn
	}
	r.add(f)
}
