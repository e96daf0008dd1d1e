//go:build !cgo

package rrdwriter

import "errors"

// Without cgo librrd is not linked in: every shim fails, and LibRRD's
// logic (librrd_logic.go) still runs, the Go header reader included.

var errNoCgo = errors.New("librrd not available: built without cgo")

func librrdCreate(string, int64, uint, []rrdDS, []rrdRRA) error { return errNoCgo }
func librrdInfoMap(string) (map[string]any, error)              { return nil, errNoCgo }
func librrdUpdate(string, []string, []string) error             { return errNoCgo }
func librrdGraph(graphCall) ([]byte, error)                     { return nil, errNoCgo }
