package rrd

import (
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// nameMax is NAME_MAX, the longest file name of Linux file systems.
const nameMax = 255

// librrdTempSuffix is what librrd's rrd_create appends to the path it is
// given to make its own temp file (mkstemp's "XXXXXX").
const librrdTempSuffix = len("XXXXXX")

// tempSeq numbers temp files; it starts at the clock so that a process
// with a reused pid does not repeat an earlier one's names.
var tempSeq atomic.Uint64

func init() { tempSeq.Store(uint64(time.Now().UnixNano())) }

// TempName returns the name of a new temp file in the directory of the
// RRD file named base: ".<base>.<pid>.<seq>.tmp", every one different,
// with base cut so that the name with librrd's suffix fits NAME_MAX (a
// target name of 255 characters gives an RRD file name of 221).
func TempName(base string) string {
	suffix := "." + strconv.Itoa(os.Getpid()) + "." + strconv.FormatUint(tempSeq.Add(1), 36) + ".tmp"
	if room := nameMax - librrdTempSuffix - len(".") - len(suffix); len(base) > room {
		base = base[:room]
	}
	return "." + base + suffix
}
