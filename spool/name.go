package spool

import (
	"errors"
	"fmt"

	"github.com/cespare/xxhash/v2"
)

const hexDigits = "0123456789abcdef"

// KeyHash returns the hash that names and places the entries of key:
// xxhash64 of the key's bytes. It does not allocate.
func KeyHash(key string) uint64 { return xxhash.Sum64String(key) }

// Ref names one entry: the hash of its key and its poll time in Unix
// seconds. An entry's file name is the Ref's String.
type Ref struct {
	Hash uint64
	Time int64
}

// nameHashLen is the length of the hash part of an entry name.
const nameHashLen = 16

// MaxNameLen is an upper bound on the length of an entry file name.
const MaxNameLen = nameHashLen + 1 + 20

// AppendName appends the entry's file name, "<16 hex digits>-<unix seconds>".
func (r Ref) AppendName(dst []byte) []byte {
	var hex [16]byte
	putHex(hex[:], r.Hash)
	dst = append(dst, hex[:]...)
	dst = append(dst, '-')
	return appendInt(dst, r.Time)
}

// String returns the entry's file name.
func (r Ref) String() string {
	return string(r.AppendName(make([]byte, 0, MaxNameLen)))
}

// ErrBadName is wrapped by ParseName's errors.
var ErrBadName = errors.New("not a spool entry name")

// ParseName parses an entry file name. It accepts exactly what AppendName
// produces: 16 lower-case hex digits, '-', and a non-negative decimal Unix
// time without leading zeros. It does not allocate unless it fails.
func ParseName(name string) (Ref, error) {
	r, ok := parseName(name)
	if !ok {
		return Ref{}, fmt.Errorf("parse entry name %q: %w", name, ErrBadName)
	}
	return r, nil
}

// ParseNameBytes is ParseName for a name held in a byte slice (as read from
// a directory), reporting success instead of an error. It never allocates.
func ParseNameBytes(name []byte) (Ref, bool) {
	return parseName(name)
}

func parseName[S string | []byte](name S) (Ref, bool) {
	n := len(name)
	if n < nameHashLen+2 || n > MaxNameLen || name[nameHashLen] != '-' {
		return Ref{}, false
	}
	var h uint64
	for i := 0; i < nameHashLen; i++ {
		v, ok := unhex(name[i])
		if !ok {
			return Ref{}, false
		}
		h = h<<4 | uint64(v)
	}
	digits := name[nameHashLen+1:]
	if len(digits) > 1 && digits[0] == '0' {
		return Ref{}, false
	}
	var t int64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return Ref{}, false
		}
		d := int64(c - '0')
		if t > (1<<63-1-d)/10 {
			return Ref{}, false
		}
		t = t*10 + d
	}
	return Ref{Hash: h, Time: t}, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}

func putHex(dst []byte, v uint64) {
	for i := 15; i >= 0; i-- {
		dst[i] = hexDigits[v&0xf]
		v >>= 4
	}
}

func appendInt(dst []byte, v int64) []byte {
	var buf [20]byte
	i := len(buf)
	for {
		i--
		buf[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(dst, buf[i:]...)
}
