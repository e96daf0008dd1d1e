package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// pidFile is a --pid-file this process wrote. It is written only once
// every start step that can fail has succeeded, and removed only while it
// is still that file with this process's id: a spoold that fails to start,
// or one whose file a newer one replaced, never removes another's.
type pidFile struct {
	path    string
	content []byte
	written os.FileInfo
}

// writePidFile writes this process's id to path.
func writePidFile(path string) (*pidFile, error) {
	p := &pidFile{path: path, content: []byte(strconv.Itoa(os.Getpid()) + "\n")}
	if err := os.WriteFile(path, p.content, 0o644); err != nil {
		return nil, fmt.Errorf("write pid file %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("write pid file %s: %w", path, err)
	}
	p.written = fi
	return p, nil
}

// remove removes the pid file if it is still the one written, with the
// same content; otherwise it leaves it and says why.
func (p *pidFile) remove() error {
	fi, err := os.Stat(p.path)
	if err != nil {
		return fmt.Errorf("remove pid file %s: %w", p.path, err)
	}
	// Another file at the path is not read: under --landlock only the
	// file written may be.
	leftAlone := fmt.Errorf("remove pid file %s: left alone: it is no longer the file this process wrote", p.path)
	if !os.SameFile(fi, p.written) {
		return leftAlone
	}
	b, err := os.ReadFile(p.path)
	if err != nil {
		return fmt.Errorf("remove pid file %s: %w", p.path, err)
	}
	if !bytes.Equal(b, p.content) {
		return leftAlone
	}
	if err := os.Remove(p.path); err != nil {
		return fmt.Errorf("remove pid file %s: %w", p.path, err)
	}
	return nil
}
