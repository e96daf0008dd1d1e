package spool

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// A temp file's name in tmp/ is <pid>.<hex unix nanos>.<seq>, for example
// 4711.17a3b2c4d5e6f708.42: the pid and start time of the process that
// made it (its instance) and a sequence number from 1. RemoveStaleTemp
// removes only regular files whose names parse (tempInstance) and whose
// instance is not the running one's; anything else in tmp/ is not
// spoold's and is left alone.

// newInstance returns this process's temp-name prefix, "<pid>.<hex nanos>.".
func newInstance() string {
	return fmt.Sprintf("%d.%x.", os.Getpid(), time.Now().UnixNano())
}

// tempName returns a new temp-file name of this process (the name only,
// for tmp/).
func (s *Spool) tempName() string {
	return s.instance + strconv.FormatUint(s.seq.Add(1), 10)
}

// tempInstance reports whether name is a temp-file name spoold makes, and
// returns its instance prefix ("<pid>.<hex nanos>."). It is strict: a pid of
// 1 to 10 decimal digits (at most 2^31-1), 1 to 16 lower-case hex digits, a
// sequence number of 1 to 20 decimal digits (from 1), no sign, no leading
// zeros, nothing else.
func tempInstance(name string) (string, bool) {
	pid, rest, ok := strings.Cut(name, ".")
	if !ok {
		return "", false
	}
	nanos, seq, ok := strings.Cut(rest, ".")
	if !ok || !canonicalDecimal(pid, 10, 1<<31-1) || !canonicalHex(nanos) || !canonicalDecimal(seq, 20, 1<<64-1) {
		return "", false
	}
	return name[:len(pid)+1+len(nanos)+1], true
}

// canonicalDecimal reports whether s is a decimal number from 1 to limit of
// at most maxDigits digits, without sign or leading zeros.
func canonicalDecimal(s string, maxDigits int, limit uint64) bool {
	if len(s) == 0 || len(s) > maxDigits || s[0] == '0' {
		return false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return err == nil && v <= limit
}

// canonicalHex reports whether s is 1 to 16 lower-case hex digits without
// leading zeros, as %x prints a positive number.
func canonicalHex(s string) bool {
	if len(s) == 0 || len(s) > 16 || s[0] == '0' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if _, ok := unhex(s[i]); !ok {
			return false
		}
	}
	return true
}
