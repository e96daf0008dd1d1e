//go:build !cgo

package rrd

import (
	"errors"
	"time"
)

// Without cgo librrd is not linked in: every shim fails, and the rest of
// the package still runs, the Go header reader included.

var errNoCgo = errors.New("librrd not available: built without cgo")

func librrdUpdate([]byte, int, bool) error                                 { return errNoCgo }
func librrdGraph(GraphCall) ([]byte, error)                                { return nil, errNoCgo }
func librrdFirst(string, int) (int64, error)                               { return 0, errNoCgo }
func librrdInfo(string) ([]InfoItem, error)                                { return nil, errNoCgo }
func mallocArenas(int) error                                               { return errNoCgo }
func librrdCreate(string, uint64, int64, []string, string, []string) error { return errNoCgo }
func librrdFetch(string, string, time.Time, time.Time, time.Duration) (Fetched, error) {
	return Fetched{}, errNoCgo
}
