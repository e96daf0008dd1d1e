package poller

import (
	"math"
	"strconv"
	"strings"

	"github.com/gosnmp/gosnmp"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/spool"
)

// Value mapping. The data source type decides the spool type; the SNMP type
// decides how the number is read:
//
//	DS type                    spool type     SNMP types accepted
//	COUNTER, DERIVE, ABSOLUTE  spool.Counter  Counter32, Counter64, Gauge32, TimeTicks,
//	                                          Unsigned32, Integer >= 0, OCTET STRING of digits
//	GAUGE                      spool.Gauge    all of the above, negative Integers, Opaque
//	                                          float/double, OCTET STRING holding a number
//
// Anything else (noSuchObject, noSuchInstance, endOfMibView, NULL, an OID,
// an IpAddress, a negative Integer for a counter, text) is spool.Unknown.
// Counter32 and Counter64 values are written as they are: a wrap is the
// RRD's business (COUNTER handles it), and an agent restart is flagged on
// the entry (spool.FlagDiscontinuity), never guessed from the values.

// mapValue returns the spool value of data source d from one varbind, and
// whether it is known.
func mapValue(d *fleet.DS, pdu *gosnmp.SnmpPDU) (spool.Value, bool) {
	v := spool.Value{Name: d.Name, Type: spool.Unknown}
	u, f, kind := numeric(pdu)
	switch {
	case kind == numNone:
		return v, false
	case d.Type.Integral():
		if kind == numFloat {
			return v, false
		}
		v.Type, v.Counter = spool.Counter, u
	default:
		if kind == numUint {
			f = float64(u)
		}
		v.Type, v.Gauge = spool.Gauge, f
	}
	return v, true
}

type numKind uint8

const (
	numNone  numKind = iota
	numUint          // an unsigned integer, in u
	numFloat         // anything else numeric, in f
)

// numeric reads the number a varbind carries.
func numeric(pdu *gosnmp.SnmpPDU) (uint64, float64, numKind) {
	switch x := pdu.Value.(type) {
	case uint:
		return uint64(x), 0, numUint
	case uint64:
		return x, 0, numUint
	case uint32:
		return uint64(x), 0, numUint
	case int:
		if pdu.Type != gosnmp.Integer && pdu.Type != gosnmp.Uinteger32 {
			return 0, 0, numNone
		}
		if x >= 0 {
			return uint64(x), 0, numUint
		}
		return 0, float64(x), numFloat
	case float32:
		return finite(float64(x))
	case float64:
		return finite(x)
	case []byte:
		if pdu.Type != gosnmp.OctetString {
			return 0, 0, numNone
		}
		return parseNumber(string(x))
	}
	return 0, 0, numNone
}

func finite(f float64) (uint64, float64, numKind) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, 0, numNone
	}
	return 0, f, numFloat
}

// parseNumber reads a number some agents send as text (UCD laLoad: "0.15").
func parseNumber(s string) (uint64, float64, numKind) {
	s = strings.TrimSpace(s)
	if len(s) == 0 || len(s) > 64 {
		return 0, 0, numNone
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return u, 0, numUint
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, 0, numNone
	}
	return finite(f)
}

// uptimeTicks returns sysUpTime's TimeTicks from a varbind.
func uptimeTicks(pdu *gosnmp.SnmpPDU) (uint32, bool) {
	if pdu.Type != gosnmp.TimeTicks {
		return 0, false
	}
	switch x := pdu.Value.(type) {
	case uint32:
		return x, true
	case uint:
		return uint32(x), true
	}
	return 0, false
}
