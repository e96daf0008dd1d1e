package rrd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// The RRD header as librrd 1.x lays it out in memory and on disk
// (rrd_format.h), on a 64-bit (LP64) platform where unsigned long, time_t
// and long are 8 bytes and double is 8-byte aligned; byte order is the
// platform's. Offsets in bytes:
//
//	stat_head_t  0    cookie[4] "RRD\0"
//	             4    version[5] "0003\0", "0004\0" or "0005\0"
//	             9    7 bytes of padding
//	             16   float_cookie double = 8.642135E130 (checks the architecture)
//	             24   ds_cnt unsigned long
//	             32   rra_cnt unsigned long
//	             40   pdp_step unsigned long (seconds)
//	             48   par[10] unival                     → 128 bytes
//	ds_def_t     0    ds_nam[20] (NUL-terminated)
//	  × ds_cnt   20   dst[20] (NUL-terminated: COUNTER, GAUGE, ...)
//	             40   par[10] unival                     → 120 bytes each
//	rra_def_t    0    cf_nam[20], 4 bytes of padding
//	  × rra_cnt  24   row_cnt, 32 pdp_cnt unsigned long
//	             40   par[10] unival                     → 120 bytes each
//	live_head_t  0    last_up time_t, 8 last_up_usec long → 16 bytes
//
// Versions 0001 and 0002 keep a bare time_t instead of live_head_t; the
// reader leaves them (and anything else it does not recognize) to librrd.
// pdp_prep, cdp_prep, rra_ptr and the values follow; the reader does not
// need them.
const (
	rrdStatHeadSize = 128
	rrdDSDefSize    = 120
	rrdRRADefSize   = 120
	rrdLiveHeadSize = 16
	rrdNameSize     = 20
	rrdFloatCookie  = 8.642135e130
	// rrdMaxDefs bounds ds_cnt and rra_cnt so the header size cannot
	// overflow; real files have at most a few hundred of each.
	rrdMaxDefs = 1 << 20
	// rrdHeaderRead is the first read: enough for 67 data sources and
	// RRAs together (40 DS and 8 RRAs take 5,904 bytes).
	rrdHeaderRead = 8192
)

// ErrHeaderUnknown is wrapped by the Go reader's errors for a file it does
// not recognize (another version, platform, or no RRD file); librrd
// decides what it is.
var ErrHeaderUnknown = errors.New("rrd header not recognized by the Go reader")

// parseHeader decodes the step, data sources and last update from the
// start of an RRD file. If b is too short it returns need > len(b) and no
// error: the header takes need bytes. A file it does not recognize gives
// an error wrapping ErrHeaderUnknown.
func parseHeader(b []byte) (fi FileInfo, need int, err error) {
	dsCnt, rraCnt, step, need, err := parseStatHead(b)
	if err != nil || need > len(b) {
		return FileInfo{}, need, err
	}
	live := rrdStatHeadSize + int(dsCnt)*rrdDSDefSize + int(rraCnt)*rrdRRADefSize
	need = live + rrdLiveHeadSize
	if len(b) < need {
		return FileInfo{}, need, nil
	}
	fi = FileInfo{Step: time.Duration(step) * time.Second, DS: make([]DSInfo, dsCnt)}
	for i := range fi.DS {
		d := b[rrdStatHeadSize+i*rrdDSDefSize:]
		name, ok1 := cString(d[:rrdNameSize])
		typ, ok2 := cString(d[rrdNameSize : 2*rrdNameSize])
		if !ok1 || !ok2 {
			return FileInfo{}, 0, fmt.Errorf("%w: data source %d has no name or type", ErrHeaderUnknown, i)
		}
		fi.DS[i] = DSInfo{Name: name, Type: DSType(typ)}
	}
	fi.Last = int64(binary.NativeEndian.Uint64(b[live:]))
	// librrd parses "<seconds>.<ms>" as a double and truncates its
	// fraction to microseconds, so 811.123 may be kept as 811.122999:
	// round to the millisecond the writer sent.
	fi.LastMilli = uint16(min((binary.NativeEndian.Uint64(b[live+8:])+500)/1000, 999))
	return fi, need, nil
}

// parseStatHead checks the static head at the start of b and returns the
// counts of data sources and RRAs and the step; need > len(b) (and no
// error) when b is too short to tell.
func parseStatHead(b []byte) (dsCnt, rraCnt, step uint64, need int, err error) {
	if strconv.IntSize != 64 {
		return 0, 0, 0, 0, fmt.Errorf("%w: not a 64-bit platform", ErrHeaderUnknown)
	}
	if len(b) < rrdStatHeadSize {
		return 0, 0, 0, rrdStatHeadSize, nil
	}
	ne := binary.NativeEndian
	switch {
	case string(b[0:4]) != "RRD\x00":
		return 0, 0, 0, 0, fmt.Errorf("%w: no RRD cookie", ErrHeaderUnknown)
	case string(b[4:9]) != "0003\x00" && string(b[4:9]) != "0004\x00" && string(b[4:9]) != "0005\x00":
		return 0, 0, 0, 0, fmt.Errorf("%w: version %q", ErrHeaderUnknown, b[4:9])
	case math.Float64frombits(ne.Uint64(b[16:])) != rrdFloatCookie:
		return 0, 0, 0, 0, fmt.Errorf("%w: float cookie of another architecture", ErrHeaderUnknown)
	}
	dsCnt, rraCnt, step = ne.Uint64(b[24:]), ne.Uint64(b[32:]), ne.Uint64(b[40:])
	if dsCnt == 0 || dsCnt > rrdMaxDefs || rraCnt == 0 || rraCnt > rrdMaxDefs || step == 0 || step > math.MaxInt32 {
		return 0, 0, 0, 0, fmt.Errorf("%w: %d data sources, %d RRAs, step %d", ErrHeaderUnknown, dsCnt, rraCnt, step)
	}
	return dsCnt, rraCnt, step, rrdStatHeadSize, nil
}

// cString returns the NUL-terminated, non-empty string at the start of b.
func cString(b []byte) (string, bool) {
	n := bytes.IndexByte(b, 0)
	if n <= 0 {
		return "", false
	}
	return string(b[:n]), true
}
