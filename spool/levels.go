package spool

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxLevels is the largest number of directory levels, as in nginx
// (NGX_MAX_PATH_LEVEL).
const MaxLevels = 3

// Levels is a parsed levels specification such as "1:2". The zero value is
// not valid; use ParseLevels.
type Levels struct {
	widths [MaxLevels]uint8
	n      uint8
}

// ParseLevels parses a levels specification the way nginx parses
// proxy_cache_path levels=: one to three levels separated by ':', each one or
// two hex characters wide, no empty parts and nothing else. Unlike nginx, an
// empty specification (a flat directory) is refused: a spool of millions of
// entries in one directory is never what an operator wants.
func ParseLevels(s string) (Levels, error) {
	var l Levels
	if s == "" {
		return l, fmt.Errorf("parse levels %q: need 1 to 3 levels such as \"1:2\"", s)
	}
	for i := 0; i < len(s); {
		if l.n == MaxLevels {
			return Levels{}, fmt.Errorf("parse levels %q: more than %d levels", s, MaxLevels)
		}
		c := s[i]
		if c != '1' && c != '2' {
			return Levels{}, fmt.Errorf("parse levels %q: level %d must be 1 or 2 characters wide", s, l.n+1)
		}
		l.widths[l.n] = c - '0'
		l.n++
		i++
		if i == len(s) {
			break
		}
		if s[i] != ':' || i+1 == len(s) {
			return Levels{}, fmt.Errorf("parse levels %q: expected ':' between levels and a level after it", s)
		}
		i++
	}
	return l, nil
}

// MustParseLevels is ParseLevels for constants; it panics on error.
func MustParseLevels(s string) Levels {
	l, err := ParseLevels(s)
	if err != nil {
		panic(err)
	}
	return l
}

// Depth returns the number of directory levels.
func (l Levels) Depth() int { return int(l.n) }

// Width returns the width in hex characters of level i (0-based).
func (l Levels) Width(i int) int { return int(l.widths[i]) }

// String returns the specification in nginx's form, e.g. "1:2".
func (l Levels) String() string {
	parts := make([]string, l.n)
	for i := range parts {
		parts[i] = strconv.Itoa(int(l.widths[i]))
	}
	return strings.Join(parts, ":")
}

// LeafDirs returns how many leaf directories the layout can have
// (16^(sum of widths)), the denominator of the loader's progress.
func (l Levels) LeafDirs() int {
	n := 1
	for i := 0; i < int(l.n); i++ {
		n <<= 4 * l.widths[i]
	}
	return n
}

// AppendDir appends the relative directory of an entry with the given hash,
// e.g. "c/29" for a hash ending in ...29c with levels "1:2", without a
// trailing slash.
func (l Levels) AppendDir(dst []byte, hash uint64) []byte {
	var hex [16]byte
	putHex(hex[:], hash)
	end := len(hex)
	for i := 0; i < int(l.n); i++ {
		if i > 0 {
			dst = append(dst, '/')
		}
		w := int(l.widths[i])
		dst = append(dst, hex[end-w:end]...)
		end -= w
	}
	return dst
}

// Dir returns the relative directory of an entry with the given hash.
func (l Levels) Dir(hash uint64) string {
	return string(l.AppendDir(make([]byte, 0, 8), hash))
}

// LeafIndex returns the position of the leaf directory of hash among all
// leaves in sorted order (0 to LeafDirs()-1): the level directories' hex
// values, outermost first, as digits of one number.
func (l Levels) LeafIndex(hash uint64) int {
	idx, shift := 0, 0
	for i := 0; i < int(l.n); i++ {
		w := 4 * int(l.widths[i])
		idx = idx<<w | int(hash>>shift&(1<<w-1))
		shift += w
	}
	return idx
}

// LeafDir returns the relative directory of the leaf with index i (see
// LeafIndex), e.g. "c/29".
func (l Levels) LeafDir(i int) string {
	var hash uint64
	for lv := int(l.n) - 1; lv >= 0; lv-- { // innermost level: lowest bits of i
		w := 4 * int(l.widths[lv])
		hash |= uint64(i&(1<<w-1)) << l.shiftOf(lv)
		i >>= w
	}
	return l.Dir(hash)
}

// shiftOf returns the bit position of level lv's digits in a hash.
func (l Levels) shiftOf(lv int) int {
	s := 0
	for j := 0; j < lv; j++ {
		s += 4 * int(l.widths[j])
	}
	return s
}

// LevelMatches reports whether the directory name at level i (0-based) is the
// one that an entry with the given hash belongs in.
func (l Levels) LevelMatches(i int, name string, hash uint64) bool {
	if i >= int(l.n) || len(name) != int(l.widths[i]) {
		return false
	}
	shift := 0
	for j := 0; j < i; j++ {
		shift += 4 * int(l.widths[j])
	}
	w := int(l.widths[i])
	v := (hash >> shift) & (1<<(4*w) - 1)
	for k := w - 1; k >= 0; k-- {
		if name[k] != hexDigits[v&0xf] {
			return false
		}
		v >>= 4
	}
	return true
}

// LevelDirName reports whether name is a well-formed directory name for level
// i: exactly Width(i) lower-case hex digits.
func (l Levels) LevelDirName(i int, name string) bool {
	if i >= int(l.n) || len(name) != int(l.widths[i]) {
		return false
	}
	for k := 0; k < len(name); k++ {
		if _, ok := unhex(name[k]); !ok {
			return false
		}
	}
	return true
}
