package rrd

import (
	"golang.org/x/sys/unix"
)

// ReadRRAs reads the archive definitions from path's header with the Go
// reader. A missing file gives an error wrapping fs.ErrNotExist.
func ReadRRAs(path string) ([]RRADef, error) {
	fd, err := OpenHeader(path)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var h *Header
	_, err = readHead(fd, path, rrdHeaderRead, func(b []byte) (need int, err error) {
		h, need, err = ParseHeader(b)
		return need, err
	})
	if err != nil {
		return nil, err
	}
	return h.RRA, nil
}
