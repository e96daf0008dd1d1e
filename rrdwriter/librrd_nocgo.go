//go:build !cgo

package rrdwriter

import "errors"

// LibRRD returns an RRD whose every call fails: this binary was built
// without cgo, so librrd is not linked in.
func LibRRD() RRD { return noRRD{} }

var errNoCgo = errors.New("librrd not available: built without cgo")

type noRRD struct{}

func (noRRD) Create(string, Profile, int64) error                  { return errNoCgo }
func (noRRD) Info(string) (FileInfo, error)                        { return FileInfo{}, errNoCgo }
func (noRRD) Update(string, []string, []Row) error                 { return errNoCgo }
func (noRRD) Graph(string, []string, GraphOptions) ([]byte, error) { return nil, errNoCgo }
