package mib

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is what a MIB node is: an interior node, a scalar object, a table,
// a table's row (entry), or a column.
type Kind uint8

// The kinds of nodes.
const (
	Node Kind = iota
	Scalar
	Table
	Row
	Column
)

var kindNames = [...]string{"node", "scalar", "table", "row", "column"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// The SMI types an agent sends on the wire, as Object.Base names them.
// Integer32 and enumerations are INTEGER; Unsigned32 is Gauge32.
const (
	BaseInteger     = "INTEGER"
	BaseOctetString = "OCTET STRING"
	BaseOID         = "OBJECT IDENTIFIER"
	BaseBits        = "BITS"
	BaseIPAddress   = "IpAddress"
	BaseCounter32   = "Counter32"
	BaseGauge32     = "Gauge32"
	BaseTimeTicks   = "TimeTicks"
	BaseOpaque      = "Opaque"
	BaseCounter64   = "Counter64"
)

// Enum is one named number of an enumerated syntax: ifOperStatus's up(1).
type Enum struct {
	Label string
	Value int64
}

// Object is one named node of a MIB module. Objects are immutable: a
// Resolver hands out pointers to its own, shared by every caller.
type Object struct {
	Module string // "IF-MIB"
	Name   string // "ifHCInOctets"
	OID    string // numeric, without a leading dot: "1.3.6.1.2.1.31.1.1.1.6"
	Kind   Kind
	// Syntax is the type as the module writes it: "Counter64",
	// "DisplayString", "IANAifType", "INTEGER" for an inline enumeration;
	// empty for nodes, tables and rows.
	Syntax string
	// Base is the SMI type underneath Syntax (one of the Base constants):
	// Counter64 for ifHCInOctets, OCTET STRING for ifDescr, INTEGER for
	// ifOperStatus. Empty where Syntax is.
	Base string
	// Enums are the named numbers of an enumerated syntax (ifOperStatus,
	// ifType), in value order; nil otherwise.
	Enums []Enum
}

// QualifiedName returns "MODULE::name".
func (o *Object) QualifiedName() string { return o.Module + "::" + o.Name }

// EnumValue returns the number of an enumeration label: up for
// ifOperStatus is 1.
func (o *Object) EnumValue(label string) (int64, bool) {
	for _, e := range o.Enums {
		if e.Label == label {
			return e.Value, true
		}
	}
	return 0, false
}

// EnumLabel returns the label of an enumerated value: 1 for ifOperStatus
// is up.
func (o *Object) EnumLabel(v int64) (string, bool) {
	for _, e := range o.Enums {
		if e.Value == v {
			return e.Label, true
		}
	}
	return "", false
}

// parseEnums parses named numbers as a MIB writes them: "up(1), down(2)".
func parseEnums(s string) ([]Enum, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []Enum
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		label, num, ok := strings.Cut(f, "(")
		if !ok || !strings.HasSuffix(num, ")") || label == "" {
			return nil, fmt.Errorf("parse named number %q: want label(number)", f)
		}
		v, err := strconv.ParseInt(strings.TrimSuffix(num, ")"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("parse named number %q: %w", f, err)
		}
		out = append(out, Enum{Label: label, Value: v})
	}
	return out, nil
}
