package shm

import (
	"fmt"
	"math"
	"strconv"
)

// ParseSize parses a size in nginx's syntax: decimal digits, optionally
// followed by one unit letter, k or K (KiB), m or M (MiB), g or G (GiB):
// "1048576", "512k", "64M", "1g". Nothing else is accepted: no sign, no
// spaces, no fraction, no "b" or "KB". The error names the value:
// `parse size "x": ...`.
func ParseSize(s string) (int64, error) {
	digits, unit := s, int64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'k', 'K':
			unit = 1 << 10
		case 'm', 'M':
			unit = 1 << 20
		case 'g', 'G':
			unit = 1 << 30
		}
		if unit != 1 {
			digits = s[:len(s)-1]
		}
	}
	if digits == "" {
		return 0, fmt.Errorf("parse size %q: need digits, optionally followed by k, m or g", s)
	}
	for i := 0; i < len(digits); i++ {
		if c := digits[i]; c < '0' || c > '9' {
			return 0, fmt.Errorf("parse size %q: unexpected %q; need digits, optionally followed by k, m or g", s, c)
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > math.MaxInt64/unit {
		return 0, fmt.Errorf("parse size %q: larger than %d bytes", s, int64(math.MaxInt64))
	}
	return n * unit, nil
}
