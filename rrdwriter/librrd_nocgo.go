//go:build !cgo

package rrdwriter

import (
	"errors"
	"time"
)

// Without cgo librrd is not linked in: every shim fails, and LibRRD's
// logic (librrd_logic.go) still runs, the Go header reader included.

var errNoCgo = errors.New("librrd not available: built without cgo")

func librrdCreate(string, int64, uint, []rrdDS, []rrdRRA) error             { return errNoCgo }
func librrdInfoMap(string) (map[string]any, error)                          { return nil, errNoCgo }
func librrdUpdate([]byte, int, bool) error                                  { return errNoCgo }
func librrdGraph(graphCall) ([]byte, error)                                 { return nil, errNoCgo }
func librrdFirst(string, int) (int64, error)                                { return 0, errNoCgo }
func librrdInfoItems(string) ([]rrdInfoItem, error)                         { return nil, errNoCgo }
func librrdCreate2(string, uint64, int64, []string, string, []string) error { return errNoCgo }
func librrdFetch(string, string, time.Time, time.Time, time.Duration) (rrdFetched, error) {
	return rrdFetched{}, errNoCgo
}
