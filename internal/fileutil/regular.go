package fileutil

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// ReadRegular reads all of the file path if it is a regular file of at
// most limit bytes. It is the rule for every file an operator points
// spoold at (a targets, profiles or secret file, a MIB file): symlinks are
// followed (a link to a secret file is a normal setup); the open is
// O_NONBLOCK, so a FIFO or a device never blocks it; the opened descriptor
// is what is checked, so what is read is what was checked; and no more than
// limit+1 bytes are ever read, so a file that grows (or a device) costs no
// more memory than that. Its errors are *os.PathError naming path:
// "open /etc/x: not a regular file but a FIFO", "read /etc/x: larger than
// 65536 bytes".
func ReadRegular(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat() // fstat: the descriptor's file
	if err != nil {
		return nil, err
	}
	if t := fi.Sys().(*syscall.Stat_t).Mode & unix.S_IFMT; t != unix.S_IFREG {
		return nil, &os.PathError{Op: "open", Path: path, Err: fmt.Errorf("not a regular file but a %s", TypeName(t))}
	}
	tooLarge := &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d bytes", limit)}
	if fi.Size() > limit {
		return nil, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err // an *os.PathError of f, naming path
	}
	if int64(len(b)) > limit { // it grew since the stat
		return nil, tooLarge
	}
	return b, nil
}
