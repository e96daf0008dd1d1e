// Package snmpvalue reads a varbind the way both the configuration (table
// filters, in package fleet) and the poller (instance names, aliases,
// polled values) read it: whether it holds a value at all, its text and
// its integer. It starts no goroutines.
package snmpvalue

import (
	"fmt"
	"strconv"

	"github.com/gosnmp/gosnmp"
)

// None reports whether an SNMP type says "no value here" (noSuchObject,
// noSuchInstance, endOfMibView, NULL) rather than a value of some type.
func None(t gosnmp.Asn1BER) bool {
	switch t {
	case gosnmp.NoSuchObject, gosnmp.NoSuchInstance, gosnmp.EndOfMibView, gosnmp.Null:
		return true
	}
	return false
}

// Text is a varbind's value as text: an OCTET STRING's bytes, a number's
// decimal form.
func Text(v *gosnmp.SnmpPDU) string {
	switch x := v.Value.(type) {
	case []byte:
		return string(x)
	case string:
		return x
	}
	if n, ok := Int(v); ok {
		return strconv.FormatInt(n, 10)
	}
	return fmt.Sprint(v.Value)
}

// Int is a varbind's integer value, if it has one.
func Int(v *gosnmp.SnmpPDU) (int64, bool) {
	switch x := v.Value.(type) {
	case int:
		return int64(x), true
	case uint:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}
