package rrdwriter

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spoold/spoold/rrd"
)

// CheckDir reports whether files can be created in the RRD directory dir:
// it creates and removes a probe file named like spoold's temp files
// (rrd.TempName). A dir that does not exist yet is checked at its nearest
// existing parent, where New would create it. The error names dir (and
// for a missing dir, the first missing directory and the parent that
// refuses it, never the probe's temp name) and wraps the system's, so a
// mode 555 directory is KindPermission.
func CheckDir(dir string) error {
	at, err := nearestExisting(dir)
	if err != nil {
		return fmt.Errorf("check rrd directory %s: %w", dir, err)
	}
	err = rrd.ProbeCreate(at)
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the probe's own name says nothing to the operator
	}
	if clean := filepath.Clean(dir); at != clean {
		return fmt.Errorf("check rrd directory %s: %s does not exist and cannot be created in %s: %w", dir, firstMissing(at, clean), at, err)
	}
	return fmt.Errorf("check rrd directory %s: cannot create files in it: %w", dir, err)
}

// firstMissing is the child of the existing directory at on the way to
// dir (below it): the first directory that New would have to create.
func firstMissing(at, dir string) string {
	p := dir
	for filepath.Dir(p) != at && filepath.Dir(p) != p {
		p = filepath.Dir(p)
	}
	return p
}

// nearestExisting returns dir, or its nearest existing parent; either must
// be a directory.
func nearestExisting(dir string) (string, error) {
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			return p, nil
		case err == nil:
			return "", fmt.Errorf("%s is not a directory", p)
		case !errors.Is(err, fs.ErrNotExist) || p == filepath.Dir(p):
			return "", err
		}
	}
}
