package fleet

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// Size bounds of the files this package reads. A targets file of 100,000
// devices is about 10 MB; a secret is one short line.
const (
	maxConfigFile = 64 << 20
	maxSecretFile = 64 << 10
)

// openRegular opens path for reading if it is a regular file, following
// symlinks (a link to a secret file is an operator's normal setup). It
// opens with O_NONBLOCK, so a FIFO or a device never blocks the open, and
// checks the opened descriptor, so what is read is what was checked.
func openRegular(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s: not a regular file but %s", path, fileKind(fi.Mode()))
	}
	return f, fi.Size(), nil
}

// readRegular reads all of the regular file path, refusing anything else
// and any file larger than limit bytes. Its errors name path.
func readRegular(path string, limit int64) ([]byte, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > limit { // it grew since the stat
		return nil, fmt.Errorf("%s: larger than %d bytes", path, limit)
	}
	return b, nil
}

// readSecretFile reads a secret file: regular, at most maxSecretFile bytes.
func readSecretFile(path string) ([]byte, error) { return readRegular(path, maxSecretFile) }

// fileKind names what a non-regular file is, for an error message.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "of type " + m.Type().String()
}
