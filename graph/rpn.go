package graph

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The RPN expressions and print formats a graph template may use: a
// whitelist of rrdgraph_rpn(1)'s operators, each with how many values it
// takes from the stack and puts back, so that an expression is checked to
// leave exactly one value before librrd sees it. Left out on purpose: the
// operators with a window or a shift over time (TREND, TRENDNAN, PREDICT,
// PREDICTSIGMA, PREDICTPERC), whose cost grows with an operator's number,
// and those taking a count from the stack (SORT, REV, AVG, MEDIAN, SMIN,
// SMAX, STDEV, PERCENT).

// rpnArity is what an operator pops and pushes.
type rpnArity struct{ pop, push int }

var rpnOps = map[string]rpnArity{
	"+": {2, 1}, "-": {2, 1}, "*": {2, 1}, "/": {2, 1}, "%": {2, 1}, "ADDNAN": {2, 1}, "ATAN2": {2, 1},
	"SIN": {1, 1}, "COS": {1, 1}, "LOG": {1, 1}, "EXP": {1, 1}, "SQRT": {1, 1}, "ATAN": {1, 1},
	"FLOOR": {1, 1}, "CEIL": {1, 1}, "DEG2RAD": {1, 1}, "RAD2DEG": {1, 1}, "ABS": {1, 1},
	"LT": {2, 1}, "LE": {2, 1}, "GT": {2, 1}, "GE": {2, 1}, "EQ": {2, 1}, "NE": {2, 1},
	"UN": {1, 1}, "ISINF": {1, 1}, "IF": {3, 1}, "MIN": {2, 1}, "MAX": {2, 1},
	"MINNAN": {2, 1}, "MAXNAN": {2, 1}, "LIMIT": {3, 1},
	"UNKN": {0, 1}, "INF": {0, 1}, "NEGINF": {0, 1}, "PREV": {0, 1}, "COUNT": {0, 1},
	"TIME": {0, 1}, "NOW": {0, 1}, "LTIME": {0, 1},
	"DUP": {1, 2}, "POP": {1, 0}, "EXC": {2, 2},
}

// vdefFuncs are the VDEF functions; true for those that take a percentile.
var vdefFuncs = map[string]bool{
	"MAXIMUM": false, "MINIMUM": false, "AVERAGE": false, "STDEV": false, "LAST": false,
	"FIRST": false, "TOTAL": false, "LSLSLOPE": false, "LSLINT": false, "LSLCORREL": false,
	"PERCENT": true, "PERCENTNAN": true,
}

// rpnNumber is a number as an RPN token: no hex, no exponent beyond three
// digits, no Inf or NaN spelled out (INF, UNKN are operators).
var rpnNumber = regexp.MustCompile(`^-?[0-9]{1,15}(\.[0-9]{1,15})?([eE][-+]?[0-9]{1,3})?$`)

// checkCDefRPN checks a CDEF expression: numbers, names defined before
// (DEF, CDEF or VDEF) and operators of rpnOps, leaving one value.
func checkCDefRPN(rpn string, names map[string]ElementKind) error {
	toks, err := rpnTokens(rpn)
	if err != nil {
		return err
	}
	depth, used := 0, false
	for _, tok := range toks {
		if a, ok := rpnOps[tok]; ok {
			if depth < a.pop {
				return fmt.Errorf("RPN %q: %s needs %d values, the stack has %d", rpn, tok, a.pop, depth)
			}
			depth += a.push - a.pop
			continue
		}
		if rpnNumber.MatchString(tok) {
			depth++
			continue
		}
		if _, ok := names[tok]; ok {
			depth, used = depth+1, true
			continue
		}
		if validVName(tok) {
			return fmt.Errorf("RPN %q: %q is not defined before it", rpn, tok)
		}
		return fmt.Errorf("RPN %q: %q is not a number, a name or an operator a template may use", rpn, tok)
	}
	if depth != 1 {
		return fmt.Errorf("RPN %q leaves %d values on the stack, want 1", rpn, depth)
	}
	if !used {
		return fmt.Errorf("RPN %q names no DEF, CDEF or VDEF", rpn)
	}
	return nil
}

// checkVDefRPN checks a VDEF expression: "<series>,<FUNC>" or, for PERCENT
// and PERCENTNAN, "<series>,<0..100>,<FUNC>".
func checkVDefRPN(rpn string, names map[string]ElementKind) error {
	toks, err := rpnTokens(rpn)
	if err != nil {
		return err
	}
	if len(toks) < 2 || len(toks) > 3 {
		return fmt.Errorf("VDEF %q: want <name>,<function> or <name>,<percent>,PERCENT", rpn)
	}
	if err := usesSeries(toks[0], names); err != nil {
		return fmt.Errorf("VDEF %q: %w", rpn, err)
	}
	fn := toks[len(toks)-1]
	pct, ok := vdefFuncs[fn]
	switch {
	case !ok:
		return fmt.Errorf("VDEF %q: unknown function %q", rpn, fn)
	case pct != (len(toks) == 3):
		if pct {
			return fmt.Errorf("VDEF %q: %s takes a percentile: <name>,95,%s", rpn, fn, fn)
		}
		return fmt.Errorf("VDEF %q: %s takes no argument", rpn, fn)
	case pct:
		p, err := strconv.ParseFloat(toks[1], 64)
		if !rpnNumber.MatchString(toks[1]) || err != nil || p < 0 || p > 100 {
			return fmt.Errorf("VDEF %q: percentile %q: want 0 to 100", rpn, toks[1])
		}
	}
	return nil
}

func rpnTokens(rpn string) ([]string, error) {
	if rpn == "" {
		return nil, errors.New("empty RPN expression")
	}
	toks := strings.Split(rpn, ",")
	if len(toks) > maxRPNTokens {
		return nil, fmt.Errorf("RPN expression of %d tokens, at most %d", len(toks), maxRPNTokens)
	}
	return toks, nil
}

// printConversion is one number conversion of a GPRINT format, as rrdgraph
// takes it (bad_format_print): flags, a width and precision of at most two
// digits, and l followed by e, f or g.
var printConversion = regexp.MustCompile(`^%[-+ 0#]{0,4}[0-9]{0,2}(\.[0-9]{1,2})?l[eEfFgG]`)

// checkFormat checks a GPRINT format: text with exactly one number
// conversion, at most one %s or %S (the SI prefix), %% for a percent sign,
// and no colon.
func checkFormat(f string) error {
	if err := checkText(f); err != nil {
		return err
	}
	if strings.ContainsAny(f, ":{") {
		return fmt.Errorf("format %q: no ':' or variables in a format", f)
	}
	nums, si := 0, 0
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		rest := f[i:]
		switch {
		case strings.HasPrefix(rest, "%%"):
			i++
		case strings.HasPrefix(rest, "%s"), strings.HasPrefix(rest, "%S"):
			si++
			i++
		default:
			m := printConversion.FindString(rest)
			if m == "" {
				return fmt.Errorf("format %q: bad conversion at %q (want e.g. %%6.2lf, %%s, %%%%)", f, rest)
			}
			nums++
			i += len(m) - 1
		}
	}
	if nums != 1 || si > 1 {
		return fmt.Errorf("format %q: want one number conversion such as %%6.2lf and at most one %%s", f)
	}
	return nil
}
