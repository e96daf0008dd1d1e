package rrdwriter

import (
	"errors"
	"strings"
	"syscall"

	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdcached"
)

// ErrorKind sorts write failures by what the writer does about them.
type ErrorKind uint8

// Error kinds. KindValue is the only row-level kind: librrd rejected one
// entry's values, which is quarantined. Every other kind is target-level:
// the entries are kept and the target backs off.
const (
	KindOther      ErrorKind = iota // unrecognized librrd or I/O failure
	KindValue                       // librrd rejected a row (bad value)
	KindPermission                  // EACCES, EPERM, EROFS
	KindNoSpace                     // ENOSPC, EDQUOT, EFBIG
	KindCorrupt                     // the RRD file is not a readable RRD
	KindMismatch                    // the file's data sources differ from the profile or the entries
	KindNoProfile                   // no profile for a target whose file does not exist
	KindSpoolRead                   // a spool entry could not be read (not corruption)
	KindStale                       // written, but entries older than the file's last update were quarantined
	KindRemote                      // the forward peer could not be reached, or did not confirm (see forward.go)
	KindPath                        // the file's path leads out of the RRD directory (a symlink): not opened
	numKinds
)

var kindNames = [numKinds]string{"other", "value", "permission", "nospace", "corrupt", "mismatch", "noprofile", "spoolread", "stale", "remote", "path"}

func (k ErrorKind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "unknown"
}

// illegalTime is librrd's message for a row at or before the last update.
// The writer never sends such rows unless its cached last update is stale,
// so it re-reads and retries instead of quarantining.
const illegalTime = "illegal attempt to update using time"

// librrd messages (rrdtool 1.4 to 1.8) by kind; the first match wins.
var kindMessages = []struct {
	kind ErrorKind
	subs []string
}{
	{KindPermission, []string{"Permission denied", "Operation not permitted", "Read-only file system"}},
	{KindNoSpace, []string{"No space left on device", "Disk quota exceeded", "File too large"}},
	{KindCorrupt, []string{"is not an RRD file", "while loading header", "reached EOF", "created on another architecture",
		"unsupported RRD version", "is too small", "short read"}},
	{KindValue, []string{"not a simple", "conversion of", "found extra data on update argument",
		"data source readings", illegalTime, "can't be negative", "not a number", "expected timestamp"}},
}

// classify returns the kind of a write error: errno first, then librrd's
// message. An unrecognized error is KindOther (target-level: never
// quarantines an entry on a guess).
func classify(err error) ErrorKind {
	var pe *rrdcached.PeerError
	if errors.As(err, &pe) || errors.Is(err, errUnconfirmed) {
		return KindRemote
	}
	if errors.Is(err, rrd.ErrOutside) {
		return KindPath
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.EACCES, syscall.EPERM, syscall.EROFS:
			return KindPermission
		case syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG:
			return KindNoSpace
		}
	}
	msg := err.Error()
	for _, km := range kindMessages {
		for _, s := range km.subs {
			if strings.Contains(msg, s) {
				return km.kind
			}
		}
	}
	return KindOther
}
