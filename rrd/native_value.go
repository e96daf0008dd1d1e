package rrd

import (
	"math/big"
	"strconv"
)

// How librrd 1.7 turns the strings of an update into numbers. Its decimal
// parser is its own, not the C library's: it accumulates every digit of
// the mantissa in a double (n = n×10 + d), then scales by the decimal
// exponent with a power of ten squared bit by bit, dividing for negative
// exponents. That is not correctly rounded (strconv.ParseFloat is), so the
// native path computes the same way to store the same bits.

// parseNumber parses s as librrd parses a GAUGE, ABSOLUTE, DCOUNTER or
// DDERIVE value: [+-]digits[.digits][e[+-]digits]. ok is false for anything
// else (whitespace, "nan", "inf", hex, an exponent out of range): librrd
// reads those another way or refuses them, and the update is left to it.
func parseNumber[T text](s T) (v float64, ok bool) {
	i, neg := 0, false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	digits, exp := 0, 0
	for ; i < len(s) && isDigit(s[i]); i++ {
		v = float64(v*10) + float64(s[i]-'0')
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && isDigit(s[i]); i++ {
			v = float64(v*10) + float64(s[i]-'0')
			digits++
			exp--
		}
	}
	if digits == 0 {
		return 0, false
	}
	if neg {
		v = -v
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			eneg = s[i] == '-'
			i++
		}
		n, nd := 0, 0
		for ; i < len(s) && isDigit(s[i]); i++ {
			n = n*10 + int(s[i]-'0')
			if nd++; nd > 4 {
				return 0, false
			}
		}
		if eneg {
			n = -n
		}
		exp += n
	}
	// DBL_MIN_EXP and DBL_MAX_EXP bound the decimal exponent librrd takes.
	if i != len(s) || exp < -1021 || exp > 1024 {
		return 0, false
	}
	return scale10(v, exp), true
}

// scale10 multiplies (or divides, for exp < 0) v by 10^|exp| as librrd
// does: one power of ten for each set bit of |exp|, squared as it goes.
func scale10(v float64, exp int) float64 {
	n := exp
	if n < 0 {
		n = -n
	}
	for p := 10.0; n != 0; n >>= 1 {
		if n&1 != 0 {
			if exp < 0 {
				v /= p
			} else {
				v *= p
			}
		}
		p *= p
	}
	return v
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// text is a string or its bytes (last_ds, read in place).
type text interface{ ~string | ~[]byte }

// integerString reports whether s is what librrd takes for a COUNTER
// (digits) or, signed, a DERIVE (an optional leading '-', then digits;
// none at all passes librrd's check too).
func integerString(s string, signed bool) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '-' && i == 0 && signed {
			continue
		}
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// diffIntegers is a - b for the decimal integers a (the new value) and b
// (last_ds) as librrd computes a counter's increase: each string's
// leading non-digits skipped (a '-' among them makes it negative) and
// anything after its digits ignored; NaN without digits, with signs that
// differ, or with more than 30 digits. The exact difference's decimal
// digits are then accumulated as its parser does (exact up to 2^53).
func diffIntegers(a string, b []byte) float64 {
	da, na := integerDigits(a)
	db, nb := integerDigits(b)
	if len(da) == 0 || len(db) == 0 || na != nb || max(len(da), len(db)) > lastDSLen {
		return dnan
	}
	var d float64
	x, ok1 := SmallInteger(da)
	y, ok2 := SmallInteger(db)
	if ok1 && ok2 {
		d = accumulate(x - y)
	} else {
		x, _ := new(big.Int).SetString(da, 10)
		y, _ := new(big.Int).SetString(string(db), 10)
		x.Sub(x, y)
		neg := x.Sign() < 0
		x.Abs(x)
		for _, c := range []byte(x.String()) {
			d = float64(d*10) + float64(c-'0')
		}
		if neg {
			d = -d
		}
	}
	if na { // both negative: |a| - |b| turned around
		d = -d
	}
	return d
}

// accumulate is the exact integer d as librrd's parser reads its digits:
// exactly d below 2^53, digit by digit above.
func accumulate(d int64) float64 {
	neg := d < 0
	u := uint64(d)
	if neg {
		u = uint64(-d)
	}
	var v float64
	if u < 1<<53 {
		v = float64(u)
	} else {
		for _, c := range []byte(strconv.FormatUint(u, 10)) {
			v = float64(v*10) + float64(c-'0')
		}
	}
	if neg {
		v = -v
	}
	return v
}

// SmallInteger returns the value of s if s is 1 to 18 decimal digits and
// nothing else (below 2^53, exact as a float64 too, up to 15).
func SmallInteger[T text](s T) (int64, bool) {
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var v int64
	for i := 0; i < len(s); i++ {
		c := s[i] - '0'
		if c > 9 {
			return 0, false
		}
		v = v*10 + int64(c)
	}
	return v, true
}

// integerDigits returns the run of digits after s's leading non-digits,
// and whether a '-' was among those.
func integerDigits[T text](s T) (digits T, neg bool) {
	i := 0
	for ; i < len(s) && !isDigit(s[i]); i++ {
		if s[i] == '-' {
			neg = true
		}
	}
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	return s[i:j], neg
}
