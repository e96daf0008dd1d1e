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
// existing parent, where New would create it. The error names dir and
// wraps the system's, so a mode 555 directory is KindPermission.
func CheckDir(dir string) error {
	at, err := nearestExisting(dir)
	if err != nil {
		return fmt.Errorf("check rrd directory %s: %w", dir, err)
	}
	if err := rrd.ProbeCreate(at); err != nil {
		return fmt.Errorf("check rrd directory %s: %w", dir, err)
	}
	return nil
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
