package rrd

import (
	"encoding/binary"

	"golang.org/x/sys/unix"
)

// RRADef is what rrd_fetch needs of an archive to choose it.
type RRADef struct {
	CF   string
	Rows uint64 // row_cnt
	PDPs uint64 // pdp_cnt: steps per row
}

// ReadRRAs reads the archive definitions from path's header with the Go
// reader. A missing file gives an error wrapping fs.ErrNotExist.
func ReadRRAs(path string) ([]RRADef, error) {
	fd, err := OpenHeader(path)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	b, err := readHead(fd, path, rrdHeaderRead, func(b []byte) (int, error) {
		_, need, err := parseHeader(b)
		return need, err
	})
	if err != nil {
		return nil, err
	}
	dsCnt, rraCnt, _, _, _ := parseStatHead(b)
	ne := binary.NativeEndian
	rras := make([]RRADef, rraCnt)
	for i := range rras {
		d := b[rrdStatHeadSize+int(dsCnt)*rrdDSDefSize+i*rrdRRADefSize:]
		cf, _ := cString(d[:rrdNameSize])
		rras[i] = RRADef{CF: cf, Rows: ne.Uint64(d[24:]), PDPs: ne.Uint64(d[32:])}
	}
	return rras, nil
}
