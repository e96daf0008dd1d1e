package rrd

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
)

// The on-disk layout of an RRD file as librrd 1.7 writes it on a 64-bit
// little-endian (LP64) machine: the structs of rrd_format.h stored as the
// compiler lays them out, unsigned long, time_t and long 8 bytes, double
// 8-byte aligned, byte order the machine's. Offsets in bytes:
//
//	stat_head_t   0   cookie[4] "RRD\0"
//	              4   version[5] "0003\0" (0004 with MHWPREDICT or a smoothing
//	                  window, 0005 with DCOUNTER or DDERIVE)
//	              9   7 bytes of padding
//	             16   float_cookie double 8.642135E130 (the architecture check)
//	             24   ds_cnt, 32 rra_cnt, 40 pdp_step (seconds), unsigned long
//	             48   par[10] unival (unused)                          → 128
//	ds_def_t      0   ds_nam[20], 20 dst[20] (NUL-terminated)
//	  × ds_cnt   40   par[10] unival: 0 heartbeat (u_cnt), 1 min, 2 max
//	                  (u_val, NaN for none); COMPUTE keeps its RPN from
//	                  par[0] instead: rpn_cdefds_t {char op; pad; short val}
//	                  × 20, ended by op 32 (OP_END)                     → 120
//	rra_def_t     0   cf_nam[20], 4 bytes of padding
//	  × rra_cnt  24   row_cnt, 32 pdp_cnt unsigned long
//	             40   par[10] unival: 0 xff (u_val)                      → 120
//	live_head_t   0   last_up time_t, 8 last_up_usec long                →  16
//	pdp_prep_t    0   last_ds[30] (the last value as given, NUL-padded),
//	  × ds_cnt        2 bytes of padding
//	             32   scratch[10] unival: 0 unknown seconds (u_cnt),
//	                  1 value so far (u_val)                             → 112
//	cdp_prep_t    0   scratch[10] unival: 0 value so far (u_val), 1 unknown
//	  × rra × ds      PDPs (u_cnt), 8 primary, 9 secondary value (u_val) →  80
//	rra_ptr_t     0   cur_row unsigned long × rra_cnt                    →   8
//
// The rows follow, archive after archive: row_cnt rows of ds_cnt doubles.
// live_head through rra_ptr is one contiguous range, the live head: all
// an update changes besides the rows. Versions 0001 and 0002 keep a bare
// time_t instead of live_head_t and are left to librrd.
const (
	statHeadSize = 128
	dsDefSize    = 120
	rraDefSize   = 120
	liveHeadSize = 16
	pdpPrepSize  = 112
	cdpPrepSize  = 80
	rraPtrSize   = 8
	valueSize    = 8
	nameSize     = 20
	lastDSLen    = 30
	parCount     = 10
	floatCookie  = 8.642135e130
	// maxDefs bounds ds_cnt and rra_cnt so that no size below overflows;
	// real files have at most a few hundred of each.
	maxDefs = 1 << 16
	// maxRows bounds one archive's rows × data sources (values).
	maxValues = 1 << 36
)

// Offsets inside the parameter and scratch arrays (rrd_format.h's enums).
const (
	dsHeartbeat = 0
	dsMin       = 1
	dsMax       = 2
	rraXFF      = 0

	pdpUnknSec = 0
	pdpValue   = 1

	cdpValue     = 0
	cdpUnknPDP   = 1
	cdpPrimary   = 8
	cdpSecondary = 9
)

// Header is the static part of an RRD file: the definitions of its data
// sources and archives and where each part of the file lies. It changes
// only when someone tunes the file (rrdtool tune), which rewrites these
// bytes; the live head after them changes with every update.
type Header struct {
	Version int    // 3, 4 or 5
	Step    uint64 // seconds per primary data point
	DS      []DSDef
	RRA     []RRADef

	raw       []byte  // the static bytes parsed: stat head, ds and rra defs
	rraStart  []int64 // offset of each archive's first row
	liveOff   int64   // live_head_t
	pdpOff    int64   // pdp_prep_t × ds_cnt
	cdpOff    int64   // cdp_prep_t × rra_cnt × ds_cnt
	ptrOff    int64   // rra_ptr_t × rra_cnt
	headerLen int64   // everything before the first row
	fileLen   int64   // the header and every row: the file's least size
}

// DSDef is a data source definition (ds_def_t).
type DSDef struct {
	Name, Type string
	// Par is the definition's parameters as stored; Heartbeat, Min and Max
	// read them (a COMPUTE data source keeps its RPN there instead).
	Par [parCount]uint64
}

// Heartbeat is the most seconds between updates before the value is
// unknown (u_cnt of par[0]).
func (d *DSDef) Heartbeat() uint64 { return d.Par[dsHeartbeat] }

// Min and Max are the limits of a rate; NaN is none.
func (d *DSDef) Min() float64 { return math.Float64frombits(d.Par[dsMin]) }
func (d *DSDef) Max() float64 { return math.Float64frombits(d.Par[dsMax]) }

// RRADef is an archive definition (rra_def_t): what rrd_fetch needs of an
// archive to choose it, and its parameters.
type RRADef struct {
	CF   string
	Rows uint64 // row_cnt
	PDPs uint64 // pdp_cnt: primary data points a row
	Par  [parCount]uint64
}

// XFF is the part of a row's PDPs that may be unknown with the row still
// known.
func (r *RRADef) XFF() float64 { return math.Float64frombits(r.Par[rraXFF]) }

// HeaderLen is the length of everything before the first row.
func (h *Header) HeaderLen() int64 { return h.headerLen }

// HeaderLen is the length of the header of a file with ds data sources
// and rra archives: everything before the first row.
func HeaderLen(ds, rra int64) int64 {
	return statHeadSize + ds*(dsDefSize+pdpPrepSize) + rra*(rraDefSize+rraPtrSize+ds*cdpPrepSize) + liveHeadSize
}

// LiveRange is the offset and length of the live head: live_head_t through
// rra_ptr_t, the part of the header an update rewrites.
func (h *Header) LiveRange() (off, n int64) { return h.liveOff, h.headerLen - h.liveOff }

var ne = binary.NativeEndian

// ParseHeader decodes the static part of an RRD file from the start of b.
// If b is too short it returns need > len(b) and no error: read need bytes
// (the static part and the last update; the whole header takes HeaderLen). A file whose layout
// is not the one above gives a *NotNativeError: librrd decides what it is.
func ParseHeader(b []byte) (h *Header, need int, err error) {
	dsCnt, rraCnt, step, need, err := parseStatHead(b)
	if err != nil || need > len(b) {
		return nil, need, err
	}
	ds, rra := int64(dsCnt), int64(rraCnt)
	defsEnd := statHeadSize + ds*dsDefSize + rra*rraDefSize
	if int64(len(b)) < defsEnd {
		// Asked for with the last update after them, which every reader
		// wants next.
		return nil, int(defsEnd + liveHeadSize), nil
	}
	h = &Header{Step: step, DS: make([]DSDef, ds), RRA: make([]RRADef, rra)}
	h.Version, _ = strconv.Atoi(string(b[4:8]))
	for i := range h.DS {
		d := b[statHeadSize+int64(i)*dsDefSize:]
		name, ok1 := cString(d[:nameSize])
		typ, ok2 := cString(d[nameSize : 2*nameSize])
		if !ok1 || !ok2 {
			return nil, 0, notNative(ReasonLayout, "data source %d has no name or type", i)
		}
		h.DS[i] = DSDef{Name: name, Type: typ, Par: readPar(d[2*nameSize:])}
	}
	rows := int64(0)
	for i := range h.RRA {
		d := b[statHeadSize+ds*dsDefSize+int64(i)*rraDefSize:]
		cf, ok := cString(d[:nameSize])
		r := RRADef{CF: cf, Rows: ne.Uint64(d[24:]), PDPs: ne.Uint64(d[32:]), Par: readPar(d[40:])}
		if !ok || r.Rows > maxValues/dsCnt {
			return nil, 0, notNative(ReasonLayout, "archive %d (%q) has %d rows", i, cf, r.Rows)
		}
		h.RRA[i] = r
		rows += int64(r.Rows)
		if rows > maxValues/ds {
			return nil, 0, notNative(ReasonLayout, "%d rows", rows)
		}
	}
	h.liveOff = defsEnd
	h.pdpOff = h.liveOff + liveHeadSize
	h.cdpOff = h.pdpOff + ds*pdpPrepSize
	h.ptrOff = h.cdpOff + rra*ds*cdpPrepSize
	h.headerLen = h.ptrOff + rra*rraPtrSize
	start := h.headerLen
	h.rraStart = make([]int64, rra)
	for i, r := range h.RRA {
		h.rraStart[i] = start
		start += int64(r.Rows) * ds * valueSize
	}
	h.fileLen = start
	h.raw = bytes.Clone(b[:defsEnd])
	return h, int(defsEnd), nil
}

// parseStatHead checks the stat head at the start of b and returns the
// counts of data sources and archives and the step; need > len(b) (and no
// error) when b is too short to tell.
func parseStatHead(b []byte) (dsCnt, rraCnt, step uint64, need int, err error) {
	if strconv.IntSize != 64 {
		return 0, 0, 0, 0, notNative(ReasonArch, "not a 64-bit platform")
	}
	if len(b) < statHeadSize {
		return 0, 0, 0, statHeadSize, nil
	}
	switch v := string(b[4:9]); {
	case string(b[0:4]) != "RRD\x00":
		return 0, 0, 0, 0, notNative(ReasonLayout, "no RRD cookie")
	case math.Float64frombits(ne.Uint64(b[16:])) != floatCookie:
		return 0, 0, 0, 0, notNative(ReasonArch, "float cookie of another architecture or byte order")
	case v != "0003\x00" && v != "0004\x00" && v != "0005\x00":
		return 0, 0, 0, 0, notNative(ReasonVersion, "version %q", b[4:9])
	}
	dsCnt, rraCnt, step = ne.Uint64(b[24:]), ne.Uint64(b[32:]), ne.Uint64(b[40:])
	if dsCnt == 0 || dsCnt > maxDefs || rraCnt == 0 || rraCnt > maxDefs || step == 0 || step > math.MaxInt32 {
		return 0, 0, 0, 0, notNative(ReasonLayout, "%d data sources, %d archives, step %d", dsCnt, rraCnt, step)
	}
	return dsCnt, rraCnt, step, statHeadSize, nil
}

func readPar(b []byte) (p [parCount]uint64) {
	for i := range p {
		p[i] = ne.Uint64(b[i*8:])
	}
	return p
}

// cString returns the NUL-terminated, non-empty string at the start of b.
func cString(b []byte) (string, bool) {
	n := bytes.IndexByte(b, 0)
	if n <= 0 {
		return "", false
	}
	return string(b[:n]), true
}

// sameStatic reports whether b starts with the static bytes h was parsed
// from: a file tuned since gives false.
func (h *Header) sameStatic(b []byte) bool {
	return len(b) >= len(h.raw) && bytes.Equal(b[:len(h.raw)], h.raw)
}

// live is a file's live head, read in one piece (b: live_head_t through
// rra_ptr_t) and changed in place, so that bytes an update does not touch
// (padding, parameters of other archive kinds) are written back as read.
// pdpBase, cdpBase and ptrBase are where its parts start in b (set).
type live struct {
	h                         *Header
	b                         []byte
	pdpBase, cdpBase, ptrBase int
}

// set makes l the live head b of a file of header h.
func (l *live) set(h *Header, b []byte) {
	*l = live{h: h, b: b, pdpBase: int(h.pdpOff - h.liveOff), cdpBase: int(h.cdpOff - h.liveOff), ptrBase: int(h.ptrOff - h.liveOff)}
}

func (l *live) lastUp() int64   { return int64(ne.Uint64(l.b[0:])) }
func (l *live) lastUsec() int64 { return int64(ne.Uint64(l.b[8:])) }
func (l *live) setLast(sec, usec int64) {
	ne.PutUint64(l.b[0:], uint64(sec))
	ne.PutUint64(l.b[8:], uint64(usec))
}

// pdpPrep is one pdp_prep_t in place.
type pdpPrep [pdpPrepSize]byte

func (l *live) pdp(i int) *pdpPrep {
	o := l.pdpBase + i*pdpPrepSize
	return (*pdpPrep)(l.b[o : o+pdpPrepSize])
}

// lastDS returns data source i's last_ds bytes (30, NUL-padded).
func (l *live) lastDS(i int) []byte { return l.pdp(i)[:lastDSLen] }

// setLastDS stores s as librrd does: its first 29 bytes, NUL-padded.
func (l *live) setLastDS(i int, s string) {
	d := l.lastDS(i)
	n := copy(d[:lastDSLen-1], s)
	clear(d[n:])
}

func (p *pdpPrep) cnt(k int) uint64        { return ne.Uint64(p[32+8*k:]) }
func (p *pdpPrep) setCnt(k int, v uint64)  { ne.PutUint64(p[32+8*k:], v) }
func (p *pdpPrep) val(k int) float64       { return math.Float64frombits(p.cnt(k)) }
func (p *pdpPrep) setVal(k int, v float64) { p.setCnt(k, math.Float64bits(v)) }

// cdps returns the cdp_prep_t of archive r, one a data source.
func (l *live) cdps(r int) []byte {
	n := len(l.h.DS) * cdpPrepSize
	o := l.cdpBase + r*n
	return l.b[o : o+n]
}

// cdpAt returns the i-th cdp_prep_t of cdps.
func cdpAt(cdps []byte, i int) *cdpPrep {
	return (*cdpPrep)(cdps[i*cdpPrepSize : (i+1)*cdpPrepSize])
}

// cdpPrep is one cdp_prep_t in place: its scratch array.
type cdpPrep [cdpPrepSize]byte

func (c *cdpPrep) cnt(k int) uint64        { return ne.Uint64(c[8*k:]) }
func (c *cdpPrep) setCnt(k int, v uint64)  { ne.PutUint64(c[8*k:], v) }
func (c *cdpPrep) val(k int) float64       { return math.Float64frombits(c.cnt(k)) }
func (c *cdpPrep) setVal(k int, v float64) { c.setCnt(k, math.Float64bits(v)) }

func (l *live) curRow(r int) uint64       { return ne.Uint64(l.b[l.ptrBase+r*rraPtrSize:]) }
func (l *live) setCurRow(r int, v uint64) { ne.PutUint64(l.b[l.ptrBase+r*rraPtrSize:], v) }

// check reports a live head librrd would not have written: a current row
// outside its archive.
func (l *live) check() error {
	for r := range l.h.RRA {
		if l.curRow(r) >= l.h.RRA[r].Rows {
			return notNative(ReasonLayout, "archive %d has %d rows, current row %d", r, l.h.RRA[r].Rows, l.curRow(r))
		}
	}
	return nil
}

// Reasons a file or an update is left to librrd (NotNativeError.Reason):
// a small fixed set, each a label of the fallback counter.
const (
	ReasonArch     = "architecture" // another platform's or byte order's file
	ReasonVersion  = "version"      // a format version other than 0003-0005
	ReasonLayout   = "layout"       // counts, sizes or pointers librrd would refuse or not write
	ReasonArchive  = "archive"      // a consolidation function other than AVERAGE, MIN, MAX, LAST
	ReasonDSType   = "ds_type"      // a data source type the native path does not know
	ReasonCompute  = "compute"      // a COMPUTE RPN it does not evaluate
	ReasonValue    = "value"        // a value or time librrd parses differently or refuses
	ReasonTemplate = "template"     // a template naming unknown, repeated or COMPUTE sources
)

// NotNativeError says the native path does not handle a file or an
// update; nothing was written, and librrd is to do the update.
type NotNativeError struct {
	Reason string // one of the Reason constants
	Detail string
}

func (e *NotNativeError) Error() string {
	return "not handled by the native rrd update (" + e.Reason + "): " + e.Detail
}

// Is makes a file the native path does not know (any reason but a value
// or a template of one update) an ErrHeaderUnknown: librrd decides what
// it is.
func (e *NotNativeError) Is(target error) bool {
	return target == ErrHeaderUnknown && e.Reason != ReasonValue && e.Reason != ReasonTemplate
}

func notNative(reason, format string, args ...any) *NotNativeError {
	return &NotNativeError{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}
