package rrd

import (
	"errors"
	"time"
)

// rrdHeaderRead is the first read of a header: enough for 67 data sources
// and RRAs together (40 DS and 8 RRAs take 5,904 bytes of definitions).
const rrdHeaderRead = 8192

// ErrHeaderUnknown is wrapped by the Go reader's errors for a file it does
// not recognize (another version, platform, or no RRD file); librrd
// decides what it is.
var ErrHeaderUnknown = errors.New("rrd header not recognized by the Go reader")

// parseHeader decodes the step, data sources and last update from the
// start of an RRD file (ParseHeader's static part and the live head's
// first field). If b is too short it returns need > len(b) and no error:
// the header takes need bytes. A file it does not recognize gives an
// error wrapping ErrHeaderUnknown.
func parseHeader(b []byte) (fi FileInfo, need int, err error) {
	h, need, err := readHeaders.parse(b)
	if err != nil || h == nil {
		return FileInfo{}, need, err
	}
	if need = int(h.liveOff + liveHeadSize); len(b) < need {
		return FileInfo{}, need, nil
	}
	return h.fileInfo(b), need, nil
}

// fileInfo is the FileInfo of a file of header h whose first bytes,
// through the live head's first fields, are b.
func (h *Header) fileInfo(b []byte) FileInfo {
	fi := FileInfo{Step: time.Duration(h.Step) * time.Second, DS: make([]DSInfo, len(h.DS))}
	for i, d := range h.DS {
		fi.DS[i] = DSInfo{Name: d.Name, Type: DSType(d.Type)}
	}
	fi.Last = int64(ne.Uint64(b[h.liveOff:]))
	// librrd parses "<seconds>.<ms>" as a double and truncates its
	// fraction to microseconds, so 811.123 may be kept as 811.122999:
	// round to the millisecond the writer sent.
	fi.LastMilli = uint16(min((ne.Uint64(b[h.liveOff+8:])+500)/1000, 999))
	return fi
}
