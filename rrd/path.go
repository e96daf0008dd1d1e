package rrd

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// maxSegment bounds one escaped path segment, leaving room for ".rrd" and
// the hash suffix under NAME_MAX (255).
const maxSegment = 200

// RRDPath returns the path of key's RRD file relative to Options.Dir. It is
// never absolute, never contains a "." or ".." segment or a hidden name,
// and always ends in ".rrd":
//
//   - bytes outside [A-Za-z0-9._-] become %XX (so '%' itself is escaped and
//     the mapping is one-to-one);
//   - a leading '.' of a segment and the '.' of a directory segment ending
//     in ".rrd" become %2E, so no directory is named like an RRD file;
//   - "/" separates subdirectories when every segment between slashes is
//     non-empty; otherwise every "/" is escaped and the file is flat;
//   - a segment longer than 200 bytes after escaping is cut to 200 bytes and
//     suffixed with "~" and the key's hash in hex ('~' never appears
//     otherwise);
//   - the empty key (no poller key is empty; the spool refuses it) is "%",
//     which no other key gives.
func RRDPath(key string) string {
	if key == "" {
		return "%.rrd"
	}
	segs := strings.Split(key, "/")
	for _, s := range segs {
		if s == "" {
			segs = []string{key}
			break
		}
	}
	var b strings.Builder
	for i, s := range segs {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(escapeSegment(key, s, i < len(segs)-1))
	}
	b.WriteString(".rrd")
	return b.String()
}

func escapeSegment(key, seg string, isDir bool) string {
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(seg)+8)
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		dotRRD := isDir && c == '.' && i == len(seg)-4 && seg[i:] == ".rrd"
		if safeByte(c) && !(c == '.' && i == 0) && !dotRRD {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hex[c>>4], hex[c&0xf])
	}
	if len(b) > maxSegment {
		b = append(b[:maxSegment], '~')
		b = fmt.Appendf(b, "%016x", xxhash.Sum64String(key))
	}
	return string(b)
}

func safeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// Files of the rrdcached protocol. A file a client names over the protocol
// ("host/load.rrd", clean and relative to Options.Dir) is spooled under the
// key "/" + its name: poller target names never start with "/", so these
// keys are a namespace of their own, and their file is Options.Dir + the
// name verbatim, not through RRDPath's escaping. Such a key has no profile:
// its file must exist (made by CREATE or by the client).

// ProtocolKey returns the spool key of the protocol's file name.
func ProtocolKey(file string) string { return "/" + file }

// ProtocolFile returns the file name of a protocol key: ok only for "/"
// followed by a clean, local, non-empty relative name. Any other key, even
// one starting with "/", goes through RRDPath.
func ProtocolFile(key string) (file string, ok bool) {
	file, ok = strings.CutPrefix(key, "/")
	if !ok || !filepath.IsLocal(file) || filepath.Clean(file) != file {
		return "", false
	}
	return file, true
}

// KeyPath returns the path of key's RRD file relative to the RRD
// directory: a protocol key's name, or RRDPath.
func KeyPath(key string) string {
	if file, ok := ProtocolFile(key); ok {
		return file
	}
	return RRDPath(key)
}

// PathKey returns the key whose RRDPath is file, if there is one: the
// inverse of RRDPath except for segments cut to a hash, which cannot be
// inverted (ok is false for them).
func PathKey(file string) (key string, ok bool) {
	base, ok := strings.CutSuffix(file, ".rrd")
	if !ok || strings.IndexByte(base, '~') >= 0 {
		return "", false
	}
	b := make([]byte, 0, len(base))
	for i := 0; i < len(base); i++ {
		c := base[i]
		if c == '%' && i+2 < len(base) {
			hi, ok1 := unhexDigit(base[i+1])
			lo, ok2 := unhexDigit(base[i+2])
			if ok1 && ok2 {
				b = append(b, hi<<4|lo)
				i += 2
				continue
			}
		}
		b = append(b, c)
	}
	key = string(b)
	return key, RRDPath(key) == file
}

func unhexDigit(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
