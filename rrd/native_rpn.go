package rrd

import "math"

// A COMPUTE data source's RPN as rrdtool create stores it in the
// definition's parameters (rpn_cdefds_t: an op byte, a padding byte, a
// 16-bit value: the constant of a number, the index of a variable), and
// the subset of librrd's RPN operators the native path evaluates, each as
// librrd's rpn_calc does when it computes a PDP (a variable is the PDP of
// a data source before this one). Anything else (functions whose last bit
// may differ between C's libm and Go, MOD, sorting; rrdtool create refuses
// the time and position operators in a COMPUTE) is left to librrd.

// rpnOp is librrd's operator number (rrd_rpncalc.h's op_en).
type rpnOp byte

const (
	opNumber   rpnOp = 0
	opVariable rpnOp = 1
	opInf      rpnOp = 2
	opNegInf   rpnOp = 4
	opUnkn     rpnOp = 5
	opAdd      rpnOp = 8
	opSub      rpnOp = 10
	opMul      rpnOp = 11
	opDiv      rpnOp = 12
	opDup      rpnOp = 14
	opExc      rpnOp = 15
	opPop      rpnOp = 16
	opLT       rpnOp = 20
	opLE       rpnOp = 21
	opGT       rpnOp = 22
	opGE       rpnOp = 23
	opEQ       rpnOp = 24
	opIf       rpnOp = 25
	opMin      rpnOp = 26
	opMax      rpnOp = 27
	opLimit    rpnOp = 28
	opFloor    rpnOp = 29
	opCeil     rpnOp = 30
	opUn       rpnOp = 31
	opEnd      rpnOp = 32
	opNE       rpnOp = 34
	opIsInf    rpnOp = 35
	opSqrt     rpnOp = 39
	opAbs      rpnOp = 50
	opAddNaN   rpnOp = 51
	opMinNaN   rpnOp = 52
	opMaxNaN   rpnOp = 53
)

// rpnNode is one stored node.
type rpnNode struct {
	op  rpnOp
	val int16
}

// maxRPNNodes is how many nodes the parameters hold (10 × 8 / 4).
const maxRPNNodes = parCount * 8 / 4

// compileRPN decodes data source ds's stored RPN and checks that the
// native path evaluates every node and that it leaves one value: an error
// says why not.
func compileRPN(h *Header, ds int) ([]rpnNode, error) {
	var b [parCount * 8]byte
	for i, p := range h.DS[ds].Par {
		ne.PutUint64(b[i*8:], p)
	}
	var nodes []rpnNode
	depth := 0
	for i := 0; ; i++ {
		if i == maxRPNNodes {
			return nil, notNative(ReasonCompute, "data source %s: RPN without an end", h.DS[ds].Name)
		}
		n := rpnNode{op: rpnOp(b[i*4]), val: int16(ne.Uint16(b[i*4+2:]))}
		if n.op == opEnd {
			break
		}
		pop, push, ok := rpnArity(n.op)
		if !ok {
			return nil, notNative(ReasonCompute, "data source %s: RPN operator %d", h.DS[ds].Name, n.op)
		}
		if n.op == opVariable && (n.val < 0 || int(n.val) >= ds) {
			return nil, notNative(ReasonCompute, "data source %s: RPN variable %d", h.DS[ds].Name, n.val)
		}
		if depth < pop {
			return nil, notNative(ReasonCompute, "data source %s: RPN stack underflow", h.DS[ds].Name)
		}
		depth += push - pop
		nodes = append(nodes, n)
	}
	if depth != 1 {
		return nil, notNative(ReasonCompute, "data source %s: RPN leaves %d values", h.DS[ds].Name, depth)
	}
	return nodes, nil
}

// rpnArity is how many values op takes from the stack and leaves on it
// (pop is the least depth it needs).
func rpnArity(op rpnOp) (pop, push int, ok bool) {
	switch op {
	case opNumber, opVariable, opInf, opNegInf, opUnkn:
		return 0, 1, true
	case opAdd, opSub, opMul, opDiv, opLT, opLE, opGT, opGE, opEQ, opNE,
		opMin, opMax, opAddNaN, opMinNaN, opMaxNaN:
		return 2, 1, true
	case opExc:
		return 2, 2, true
	case opDup:
		return 1, 2, true
	case opPop:
		return 1, 0, true
	case opIf, opLimit:
		return 3, 1, true
	case opFloor, opCeil, opUn, opIsInf, opSqrt, opAbs:
		return 1, 1, true
	}
	return 0, 0, false
}

// evalRPN evaluates nodes with pdp the PDPs of this step so far; stack is
// scratch space.
func evalRPN(nodes []rpnNode, pdp []float64, stack []float64) float64 {
	s := stack[:0]
	nan := dnan
	for _, n := range nodes {
		k := len(s) - 1
		switch n.op {
		case opNumber:
			s = append(s, float64(n.val))
		case opVariable:
			s = append(s, pdp[n.val])
		case opInf:
			s = append(s, math.Inf(1))
		case opNegInf:
			s = append(s, math.Inf(-1))
		case opUnkn:
			s = append(s, nan)
		case opDup:
			s = append(s, s[k])
		case opPop:
			s = s[:k]
		case opExc:
			s[k], s[k-1] = s[k-1], s[k]
		case opIf:
			if c := s[k-2]; math.IsNaN(c) || c == 0 {
				s[k-2] = s[k]
			} else {
				s[k-2] = s[k-1]
			}
			s = s[:k-1]
		case opLimit:
			x, lo, hi := s[k-2], s[k-1], s[k]
			switch {
			case math.IsNaN(x):
			case math.IsNaN(lo):
				s[k-2] = lo
			case math.IsNaN(hi):
				s[k-2] = hi
			case x < lo || x > hi:
				s[k-2] = nan
			}
			s = s[:k-1]
		case opFloor:
			s[k] = math.Floor(s[k])
		case opCeil:
			s[k] = math.Ceil(s[k])
		case opUn:
			s[k] = b2f(math.IsNaN(s[k]))
		case opIsInf:
			s[k] = b2f(math.IsInf(s[k], 0))
		case opSqrt:
			s[k] = math.Sqrt(s[k])
		case opAbs:
			s[k] = math.Abs(s[k])
		default:
			s[k-1] = binaryRPN(n.op, s[k-1], s[k])
			s = s[:k]
		}
	}
	return s[0]
}

// binaryRPN applies a two-operand operator to a (deeper) and b.
func binaryRPN(op rpnOp, a, b float64) float64 {
	switch op {
	case opAdd:
		return a + b
	case opSub:
		return a - b
	case opMul:
		return a * b
	case opDiv:
		return a / b
	case opAddNaN:
		switch {
		case math.IsNaN(a):
			return b
		case math.IsNaN(b):
			return a
		}
		return a + b
	case opMinNaN, opMaxNaN:
		switch {
		case math.IsNaN(a):
			return b
		case math.IsNaN(b):
			return a
		case op == opMinNaN && a > b, op == opMaxNaN && a < b:
			return b
		}
		return a
	}
	// The comparisons, MIN and MAX: an unknown first operand stays, an
	// unknown second one is the result.
	switch {
	case math.IsNaN(a):
		return a
	case math.IsNaN(b):
		return b
	}
	switch op {
	case opLT:
		return b2f(a < b)
	case opLE:
		return b2f(a <= b)
	case opGT:
		return b2f(a > b)
	case opGE:
		return b2f(a >= b)
	case opEQ:
		return b2f(a == b)
	case opNE:
		return b2f(a != b)
	case opMin:
		if a > b {
			return b
		}
		return a
	default: // opMax
		if a < b {
			return b
		}
		return a
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
