package fileutil

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Contains reports whether path is dir or lies below it, as the file
// system sees them: each made absolute with its symlinks resolved as far
// as it exists (the part that does not exist yet taken as written), then
// compared by name, and the existing part by identity too (device and
// inode), so that a bind mount of dir is dir as well.
func Contains(dir, path string) (bool, error) {
	d, dExists, err := resolve(dir)
	if err != nil {
		return false, err
	}
	p, _, err := resolve(path)
	if err != nil {
		return false, err
	}
	if rel, err := filepath.Rel(d, p); err == nil && (rel == "." || filepath.IsLocal(rel)) {
		return true, nil
	}
	if !dExists {
		return false, nil
	}
	di, err := os.Stat(d)
	if err != nil {
		return false, err
	}
	for a := p; ; a = filepath.Dir(a) {
		if ai, err := os.Stat(a); err == nil && os.SameFile(di, ai) {
			return true, nil
		}
		if a == filepath.Dir(a) {
			return false, nil
		}
	}
}

// resolve returns path absolute and cleaned, its longest existing prefix
// with symlinks resolved, and whether all of it exists.
func resolve(path string) (string, bool, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", false, err
	}
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(real, rest), rest == "", nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", false, err
		}
		if p == filepath.Dir(p) {
			return abs, false, nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}
