package spool

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"strconv"

	"github.com/spoold/spoold/internal/numtext"
)

// Entry format v2 (v1 read too); docs/spool-format.md has the byte diagram.
const (
	Magic    = "SPLD"
	Version1 = 1
	// Version2 adds the poll time's milliseconds in the bytes v1 reserved.
	Version2   = 2
	headerLen  = 20
	trailerLen = 4

	// MaxKeyLen bounds a key (a target name) in bytes.
	MaxKeyLen = 1024
	// MaxValues bounds the values of one entry.
	MaxValues = 4096
	// MaxValueNameLen bounds a value's name (an RRD data source name).
	MaxValueNameLen = 255
	valuePayloadLen = 8
)

// Flag bits of an entry.
const (
	// FlagDiscontinuity marks a sample taken after the agent's counters
	// restarted (sysUpTime went back): a rate computed against the previous
	// sample would be a spike.
	FlagDiscontinuity uint8 = 1 << 0
)

// ValueType is the type of a polled value.
type ValueType uint8

// Value types. Their numbers are part of the on-disk format.
const (
	Unknown ValueType = 0 // no value: timeout, noSuchObject, bad varbind
	Counter ValueType = 1 // a monotonically increasing unsigned counter
	Gauge   ValueType = 2 // a measured level
)

func (t ValueType) String() string {
	switch t {
	case Unknown:
		return "unknown"
	case Counter:
		return "counter"
	case Gauge:
		return "gauge"
	}
	return fmt.Sprintf("ValueType(%d)", uint8(t))
}

// Value is one named, typed value of an entry. Name is the RRD data source
// it goes to. Counter holds a Counter's value, Gauge a Gauge's; both are
// zero for Unknown.
type Value struct {
	Name    string
	Type    ValueType
	Counter uint64
	Gauge   float64
}

// AppendText appends v as an RRD update takes it: a counter exactly, as
// an unsigned integer; a gauge as numtext.AppendFloat writes it; an
// unknown value as "U".
func (v Value) AppendText(b []byte) []byte {
	switch v.Type {
	case Counter:
		return strconv.AppendUint(b, v.Counter, 10)
	case Gauge:
		return numtext.AppendFloat(b, v.Gauge)
	}
	return append(b, 'U')
}

// Entry is one poll result of one target.
type Entry struct {
	Key    string // the target name: the RRD file's identity
	Time   int64  // poll time, Unix seconds, >= 0
	Milli  uint16 // and milliseconds, 0..999 (0 in version 1 entries)
	Flags  uint8
	Values []Value
}

// PollTime is a poll time to the millisecond: the order of a key's
// entries, in a segment, in the index's batches and in its RRD file.
// PollTimes compare with == and Compare.
type PollTime struct {
	Sec   int64  // Unix seconds
	Milli uint16 // and milliseconds, 0..999
}

// Compare returns -1, 0 or +1 as t is before, the same as or after u.
func (t PollTime) Compare(u PollTime) int {
	return cmp.Or(cmp.Compare(t.Sec, u.Sec), cmp.Compare(t.Milli, u.Milli))
}

// PollTime returns the entry's poll time, Time and Milli.
func (e *Entry) PollTime() PollTime { return PollTime{e.Time, e.Milli} }

// Ref returns the name of the entry.
func (e *Entry) Ref() Ref { return Ref{Hash: KeyHash(e.Key), Time: e.Time} }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Validate reports whether the entry can be encoded.
func (e *Entry) Validate() error {
	switch {
	case len(e.Key) == 0 || len(e.Key) > MaxKeyLen:
		return fmt.Errorf("validate entry: key length %d not in 1..%d", len(e.Key), MaxKeyLen)
	case e.Time < 0:
		return fmt.Errorf("validate entry %q: negative time %d", e.Key, e.Time)
	case e.Milli > 999:
		return fmt.Errorf("validate entry %q: %d milliseconds, at most 999", e.Key, e.Milli)
	case len(e.Values) > MaxValues:
		return fmt.Errorf("validate entry %q: %d values, at most %d", e.Key, len(e.Values), MaxValues)
	}
	for i, v := range e.Values {
		if len(v.Name) == 0 || len(v.Name) > MaxValueNameLen {
			return fmt.Errorf("validate entry %q: value %d name length %d not in 1..%d", e.Key, i, len(v.Name), MaxValueNameLen)
		}
		if v.Type > Gauge {
			return fmt.Errorf("validate entry %q: value %s has type %d", e.Key, v.Name, v.Type)
		}
	}
	return nil
}

// EncodedLen returns the length of the entry's encoding.
func (e *Entry) EncodedLen() int {
	n := headerLen + len(e.Key) + trailerLen
	for _, v := range e.Values {
		n += 2 + len(v.Name) + valuePayloadLen
	}
	return n
}

// AppendEncode validates the entry and appends its v2 encoding to dst.
func (e *Entry) AppendEncode(dst []byte) ([]byte, error) {
	if err := e.Validate(); err != nil {
		return dst, err
	}
	start := len(dst)
	dst = append(dst, Magic...)
	dst = append(dst, Version2, e.Flags)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(e.Key)))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(e.Time))
	dst = binary.LittleEndian.AppendUint16(dst, uint16(len(e.Values)))
	dst = binary.LittleEndian.AppendUint16(dst, e.Milli)
	dst = append(dst, e.Key...)
	for _, v := range e.Values {
		dst = append(dst, byte(v.Type), byte(len(v.Name)))
		dst = append(dst, v.Name...)
		var p uint64
		switch v.Type {
		case Counter:
			p = v.Counter
		case Gauge:
			p = math.Float64bits(v.Gauge)
		}
		dst = binary.LittleEndian.AppendUint64(dst, p)
	}
	return binary.LittleEndian.AppendUint32(dst, crc32c(dst[start:])), nil
}

// ErrCorrupt is wrapped by every *CorruptionError.
var ErrCorrupt = errors.New("corrupt spool entry")

// CorruptionError says why and where an entry failed to decode or verify.
// Path is empty when the bytes did not come from a file.
type CorruptionError struct {
	Path   string
	Offset int64
	Reason string
}

func (e *CorruptionError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("corrupt spool entry at offset %d: %s", e.Offset, e.Reason)
	}
	return fmt.Sprintf("corrupt spool entry %s at offset %d: %s", e.Path, e.Offset, e.Reason)
}

// Unwrap returns ErrCorrupt, so errors.Is(err, ErrCorrupt) holds.
func (e *CorruptionError) Unwrap() error { return ErrCorrupt }

func corrupt(off int, format string, args ...any) error {
	return &CorruptionError{Offset: int64(off), Reason: fmt.Sprintf(format, args...)}
}

// Decode verifies and decodes a v1 or v2 entry. The checksum is verified before
// any field is trusted. Errors are *CorruptionError (with an empty Path).
// The returned entry does not alias data.
func Decode(data []byte) (Entry, error) { return decode(data, nil) }

// valueArena hands out the value slices of the entries of one segment from
// a few shared allocations, and remembers the previous entry's values: a
// key's entries repeat the same names in the same order, so a name equal
// to the previous entry's at the same position is that string again (no
// allocation, no interning lock).
//
// Kept in a SegmentBuffer, it also remembers the previous entry's key, and
// hands its memory out again after reset: the values it hands out are
// zeroed first.
type valueArena struct {
	buf  chunk[Value]
	prev []Value
	key  string
}

// take returns n values, capacity capped at n so that appending to them
// never reaches into another entry's.
func (a *valueArena) take(n int) []Value {
	b := a.buf.s
	if cap(b)-len(b) < n {
		b = make([]Value, 0, max(n*16, 256))
	}
	v := b[len(b) : len(b)+n : len(b)+n]
	clear(v)
	a.buf.s = b[:len(b)+n]
	a.buf.used += n
	return v
}

// reset hands the values out again (chunk.reset).
func (a *valueArena) reset(limit int) {
	a.buf.reset(limit)
	a.prev = nil
}

// keyOf returns the string of the key b: the previous entry's again when
// equal.
func (a *valueArena) keyOf(b []byte) string {
	if a == nil {
		return string(b)
	}
	if a.key != string(b) {
		a.key = string(b)
	}
	return a.key
}

// name returns the string of value i's name b.
func (a *valueArena) name(i int, b []byte) string {
	if a != nil && i < len(a.prev) && a.prev[i].Name == string(b) {
		return a.prev[i].Name
	}
	return dsNames.intern(b)
}

// decode is Decode taking the values from arena (nil: their own slice).
func decode(data []byte, arena *valueArena) (Entry, error) {
	var e Entry
	if len(data) < headerLen+trailerLen {
		return e, corrupt(len(data), "truncated: %d bytes, shorter than an empty entry", len(data))
	}
	if string(data[:4]) != Magic {
		return e, corrupt(0, "bad magic %q", data[:4])
	}
	if data[4] != Version1 && data[4] != Version2 {
		return e, corrupt(4, "unsupported version %d", data[4])
	}
	body := len(data) - trailerLen
	if want, got := binary.LittleEndian.Uint32(data[body:]), crc32c(data[:body]); want != got {
		return e, corrupt(body, "checksum mismatch: stored %08x, computed %08x", want, got)
	}
	e.Flags = data[5]
	keyLen := int(binary.LittleEndian.Uint16(data[6:]))
	t := int64(binary.LittleEndian.Uint64(data[8:]))
	n := int(binary.LittleEndian.Uint16(data[16:]))
	var ms uint16
	if data[4] == Version2 {
		ms = binary.LittleEndian.Uint16(data[18:])
	}
	switch {
	case ms > 999:
		return e, corrupt(18, "%d milliseconds, at most 999", ms)
	case keyLen == 0 || keyLen > MaxKeyLen:
		return e, corrupt(6, "key length %d not in 1..%d", keyLen, MaxKeyLen)
	case t < 0:
		return e, corrupt(8, "negative time %d", t)
	case n > MaxValues:
		return e, corrupt(16, "%d values, at most %d", n, MaxValues)
	case headerLen+keyLen > body:
		return e, corrupt(headerLen, "key of %d bytes runs past the end", keyLen)
	}
	e.Key = arena.keyOf(data[headerLen : headerLen+keyLen])
	e.Time, e.Milli = t, ms
	off := headerLen + keyLen
	switch {
	case n > 0 && arena != nil:
		e.Values = arena.take(n)
	case n > 0:
		e.Values = make([]Value, n)
	}
	for i := range e.Values {
		if off+2 > body {
			return Entry{}, corrupt(off, "value %d header runs past the end", i)
		}
		typ, nameLen := ValueType(data[off]), int(data[off+1])
		if typ > Gauge {
			return Entry{}, corrupt(off, "value %d has unknown type %d", i, typ)
		}
		if nameLen == 0 {
			return Entry{}, corrupt(off+1, "value %d has an empty name", i)
		}
		if off+2+nameLen+valuePayloadLen > body {
			return Entry{}, corrupt(off, "value %d runs past the end", i)
		}
		v := &e.Values[i]
		v.Type = typ
		v.Name = arena.name(i, data[off+2:off+2+nameLen])
		p := binary.LittleEndian.Uint64(data[off+2+nameLen:])
		switch typ {
		case Counter:
			v.Counter = p
		case Gauge:
			v.Gauge = math.Float64frombits(p)
		default:
			if p != 0 {
				return Entry{}, corrupt(off+2+nameLen, "unknown value %d has a payload", i)
			}
		}
		off += 2 + nameLen + valuePayloadLen
	}
	if off != body {
		return Entry{}, corrupt(off, "%d trailing bytes after the last value", body-off)
	}
	if arena != nil {
		arena.prev = e.Values
	}
	return e, nil
}

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// errTorn is the reason frameLen gives for an entry that runs past the end
// of the data: its tail is missing (a torn append), not wrong.
var errTorn = errors.New("torn")

// frameLen returns the length of the entry that starts data, from its
// header and value name lengths alone (the checksum is not verified: Decode
// does that). It fails with a *CorruptionError for a bad magic, version or
// field bound, and with errTorn when the entry runs past the end of data.
func frameLen(data []byte) (int, error) {
	switch {
	case len(data) < 5:
		return 0, errTorn
	case string(data[:4]) != Magic:
		return 0, corrupt(0, "bad magic %q", data[:4])
	case data[4] != Version1 && data[4] != Version2:
		return 0, corrupt(4, "unsupported version %d", data[4])
	case len(data) < headerLen:
		return 0, errTorn
	}
	keyLen := int(binary.LittleEndian.Uint16(data[6:]))
	n := int(binary.LittleEndian.Uint16(data[16:]))
	switch {
	case keyLen == 0 || keyLen > MaxKeyLen:
		return 0, corrupt(6, "key length %d not in 1..%d", keyLen, MaxKeyLen)
	case n > MaxValues:
		return 0, corrupt(16, "%d values, at most %d", n, MaxValues)
	}
	off := headerLen + keyLen
	for i := 0; i < n; i++ {
		if off+2 > len(data) {
			return 0, errTorn
		}
		if data[off+1] == 0 {
			return 0, corrupt(off+1, "value %d has an empty name", i)
		}
		off += 2 + int(data[off+1]) + valuePayloadLen
	}
	if off+trailerLen > len(data) {
		return 0, errTorn
	}
	return off + trailerLen, nil
}

// DecodeNext verifies and decodes the entry at the start of data, which may
// be followed by more (a segment), and returns it with its length. An entry
// that runs past the end of data is a *CorruptionError whose reason starts
// with "torn".
func DecodeNext(data []byte) (Entry, int, error) { return decodeNext(data, nil) }

func decodeNext(data []byte, arena *valueArena) (Entry, int, error) {
	n, err := frameLen(data)
	if errors.Is(err, errTorn) {
		return Entry{}, 0, corrupt(len(data), "torn: the entry's %d bytes end before its frame does", len(data))
	}
	if err != nil {
		return Entry{}, 0, err
	}
	e, err := decode(data[:n], arena)
	return e, n, err
}
