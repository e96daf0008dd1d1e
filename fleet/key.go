package fleet

import (
	"fmt"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// The key model: a key is an RRD file, one per target's scalars and one
// per table row, so the spool, the index and the writer all name a file
// the same way.
//
//	scalars of target T        key "T"            file <rrd-dir>/T.rrd
//	row with instance name N   key "T/" + seg(N)  file <rrd-dir>/T/seg(N).rrd
//
// seg is InstanceSegment: a one-to-one, stable escape of the instance name
// into bytes that rrd.RRDPath keeps as they are ([A-Za-z0-9._-], no
// leading '.'), so the file is named exactly like the key's last part:
//
//   - A-Z a-z 0-9 '.' '-' stay, except a leading '.';
//   - '_' becomes "__";
//   - every other byte (and a leading '.') becomes '_' and two upper-case
//     hex digits: "Gi0/1" is "Gi0_2F1", "Ethernet 1" is "Ethernet_201";
//   - a segment longer than MaxInstanceSegment is cut there (never inside
//     an escape) and ends in "_H" and the xxhash64 of the whole name in hex.
//
// Rows without a usable name get segments no name maps to ('I' and 'H'
// are not hex digits, so "_I" and "_H" never come out of the escape):
//
//   - an empty instance name is "_I" + the row's index ("_I3", "_I1.4");
//   - rows of one table whose names collide in one discovery all get the
//     segment of their name plus "_I" + their index ("Null0_I12").
//
// An index longer than maxIndexInSegment bytes (tables indexed by long
// strings) is cut there in these forms and ends in "_H" and its xxhash64.
//
// So no two rows of a target share a key, no row key equals a target's
// key (target names have no '/'), and none starts with '/' (those keys
// belong to rrdcached-protocol clients). A row key is at most 255 (target)
// + 1 + 65 (subdir) + 138 (segment) + 2 + 82 (index) bytes, well under
// spool.MaxKeyLen.

// MaxInstanceSegment is the longest InstanceSegment before the hash form:
// with a suffix "_I<index>" and ".rrd" it stays under rrd.RRDPath's
// 200-byte segment limit, so RRDPath never rewrites a row's name.
const MaxInstanceSegment = 120

// InstanceSegment returns the key segment of an instance name (see the key
// model above). The name must not be empty (EmptyInstanceSegment names
// such rows).
func InstanceSegment(name string) string {
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(name)+8)
	for i := 0; i < len(name); i++ {
		c := name[i]
		var esc []byte
		switch {
		case c == '_':
			esc = []byte{'_', '_'}
		case segmentByte(c) && !(c == '.' && i == 0):
			esc = []byte{c}
		default:
			esc = []byte{'_', hex[c>>4], hex[c&0xf]}
		}
		if len(b)+len(esc) > MaxInstanceSegment {
			return fmt.Sprintf("%s_H%016x", b, xxhash.Sum64String(name))
		}
		b = append(b, esc...)
	}
	return string(b)
}

// EmptyInstanceSegment is the segment of a row whose instance name is
// empty: "_I" and its index.
func EmptyInstanceSegment(index string) string { return "_I" + indexInSegment(index) }

// CollidingInstanceSegment is the segment of a row whose instance name
// another row of its table has too: the name's segment, "_I" and the
// row's index.
func CollidingInstanceSegment(name, index string) string {
	return InstanceSegment(name) + "_I" + indexInSegment(index)
}

// maxIndexInSegment bounds the index written into a segment.
const maxIndexInSegment = 64

// indexInSegment is an index as the "_I" forms write it: itself (arcs and
// dots only), or cut and hashed when it is long.
func indexInSegment(index string) string {
	if len(index) <= maxIndexInSegment {
		return index
	}
	return fmt.Sprintf("%s_H%016x", index[:maxIndexInSegment], xxhash.Sum64String(index))
}

func segmentByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-'
}

// RowSegments returns the segments of the rows of one table that one
// discovery found, given their instance names and indexes in the same
// order: InstanceSegment of the name, EmptyInstanceSegment for an empty
// name, and CollidingInstanceSegment for a name whose segment another row
// of the table has too.
func RowSegments(names, indexes []string) []string {
	count := make(map[string]int, len(names))
	segs := make([]string, len(names))
	for i, name := range names {
		if name == "" {
			segs[i] = EmptyInstanceSegment(indexes[i])
			continue
		}
		segs[i] = InstanceSegment(name)
		count[segs[i]]++
	}
	for i, name := range names {
		if name != "" && count[segs[i]] > 1 {
			segs[i] = CollidingInstanceSegment(name, indexes[i])
		}
	}
	return segs
}

// RowKey returns the spool key (and RRD file) of a table row of target:
// target + "/" + segment.
func RowKey(target, segment string) string { return target + "/" + segment }

// SplitKey splits a key of the key model into its target and its row
// segment (empty for a target's scalars).
func SplitKey(key string) (target, segment string) {
	target, segment, _ = strings.Cut(key, "/")
	return target, segment
}

// InstanceName returns the instance name a segment was made from, and
// false for a segment that no name gives as is (the hash form, an empty
// or colliding row's "_I" form, or a string InstanceSegment never
// returns).
func InstanceName(segment string) (string, bool) {
	if len(segment) > MaxInstanceSegment {
		return "", false
	}
	b := make([]byte, 0, len(segment))
	for i := 0; i < len(segment); i++ {
		c := segment[i]
		if c != '_' {
			if !segmentByte(c) || c == '.' && i == 0 {
				return "", false
			}
			b = append(b, c)
			continue
		}
		if i+1 < len(segment) && segment[i+1] == '_' {
			b = append(b, '_')
			i++
			continue
		}
		if i+2 >= len(segment) || !upperHex(segment[i+1]) || !upperHex(segment[i+2]) {
			return "", false
		}
		v := unhex(segment[i+1])<<4 | unhex(segment[i+2])
		if v == '_' || segmentByte(v) && !(v == '.' && i == 0) {
			return "", false // not how InstanceSegment writes it
		}
		b = append(b, v)
		i += 2
	}
	if len(b) == 0 {
		return "", false
	}
	return string(b), true
}

func upperHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'A' && c <= 'F' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'A' + 10
}
