package mib

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// maxArcs is the most arcs an OID may have (RFC 2578 section 3.5).
const maxArcs = 128

// ParseOID checks a numeric OID ("1.3.6.1.2.1.1.3.0", with or without a
// leading dot) and returns it without the dot: 2 to 128 arcs of 32 bits
// each, no leading zeros, the first arc 0, 1 or 2.
func ParseOID(s string) (string, error) {
	oid, err := parseOID(s)
	if err != nil {
		return "", fmt.Errorf("parse OID %q: %w", s, err)
	}
	return oid, nil
}

// parseOID is ParseOID with the reason alone as its error.
func parseOID(s string) (string, error) {
	oid := strings.TrimPrefix(s, ".")
	n, err := checkArcs(oid)
	if err != nil {
		return "", err
	}
	if n < 2 {
		return "", errors.New("want at least 2 arcs")
	}
	if oid[0] > '2' || oid[1] != '.' {
		return "", errors.New("the first arc must be 0, 1 or 2")
	}
	return oid, nil
}

// checkArcs checks a dotted list of arcs, as ParseOID and an instance
// suffix ("3", "1.4") need it, and returns how many there are.
func checkArcs(s string) (int, error) {
	if s == "" {
		return 0, errors.New("no arcs")
	}
	n := 0
	for arc := range strings.SplitSeq(s, ".") {
		if n++; n > maxArcs {
			return 0, fmt.Errorf("more than %d arcs", maxArcs)
		}
		if arc == "" || (len(arc) > 1 && arc[0] == '0') {
			return 0, fmt.Errorf("bad arc %q", arc)
		}
		if _, err := strconv.ParseUint(arc, 10, 32); err != nil {
			return 0, fmt.Errorf("bad arc %q: want 0 to 4294967295", arc)
		}
	}
	return n, nil
}
