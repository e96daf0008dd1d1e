package mib

import (
	"fmt"
	"sort"
	"sync"

	"github.com/sleepinggenius2/gosmi"
	"github.com/sleepinggenius2/gosmi/smi"
	"github.com/sleepinggenius2/gosmi/types"
)

// gosmiMu serializes every use of gosmi, whose state (the loaded modules,
// the search path) is one global of the process, as libsmi's is. Each
// Load initializes it, loads, copies what it needs into its own Objects
// and exits it, all under the lock; a Resolver never calls gosmi.
var gosmiMu sync.Mutex

// fileObject is an Object and the file of its module.
type fileObject struct {
	*Object
	file string
}

// buildModules loads every module of srcs with gosmi and returns their
// objects with OIDs, in module order.
func buildModules(srcs map[string]*source) (objs []fileObject, err error) {
	fsys := memFS{}
	for name, s := range srcs {
		fsys[name] = s.text
	}
	gosmiMu.Lock()
	defer gosmiMu.Unlock()
	if !smi.Init("spoold") {
		return nil, fmt.Errorf("initialize the MIB library")
	}
	defer smi.Exit()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("build MIB modules: the MIB library failed: %v", p)
		}
	}()
	smi.SetFS(smi.NewNamedFS("mib", fsys))
	var failed []string
	for _, name := range sortedNames(srcs) {
		if smi.GetModule(name) == nil {
			failed = append(failed, srcs[name].file)
			continue
		}
		mod, err := gosmi.GetModule(name)
		if err != nil {
			failed = append(failed, srcs[name].file)
			continue
		}
		for _, n := range mod.GetNodes() {
			if o := objectOf(name, n); o != nil {
				objs = append(objs, fileObject{o, srcs[name].file})
			}
		}
	}
	if len(failed) > 0 {
		return objs, &FileError{File: failed[0], Err: fmt.Errorf("the MIB library could not build the module (%d files in all: %v)", len(failed), failed)}
	}
	return objs, nil
}

// objectOf copies a gosmi node; nil for one without a usable OID (its
// parent in a missing module).
func objectOf(module string, n gosmi.SmiNode) *Object {
	if n.Name == "" || len(n.Oid) < 1 || n.Oid[0] > 2 {
		return nil
	}
	o := &Object{Module: module, Name: n.Name, OID: n.Oid.String(), Kind: kindOf(n.Kind)}
	if o.Kind != Scalar && o.Kind != Column {
		return o
	}
	if n.SmiType == nil {
		return o
	}
	o.Syntax, o.Base = syntaxOf(n.SmiType.GetRaw())
	if e := n.SmiType.Enum; e != nil && n.SmiType.BaseType == types.BaseTypeEnum {
		for _, v := range e.Values {
			o.Enums = append(o.Enums, Enum{Label: v.Name, Value: v.Value})
		}
		sort.Slice(o.Enums, func(i, j int) bool { return o.Enums[i].Value < o.Enums[j].Value })
	}
	return o
}

func kindOf(k types.NodeKind) Kind {
	switch k {
	case types.NodeScalar:
		return Scalar
	case types.NodeTable:
		return Table
	case types.NodeRow:
		return Row
	case types.NodeColumn:
		return Column
	}
	return Node
}

// applicationTypes are SNMPv2-SMI's types, by the Base they are.
var applicationTypes = map[string]string{
	"Integer32": BaseInteger, "Unsigned32": BaseGauge32, "Gauge32": BaseGauge32,
	"Counter32": BaseCounter32, "Counter64": BaseCounter64, "TimeTicks": BaseTimeTicks,
	"IpAddress": BaseIPAddress, "Opaque": BaseOpaque,
}

// syntaxOf returns a type's name as the MIB writes it and its base: the
// first named type up its chain, and the SNMPv2-SMI type (or ASN.1 type)
// at the chain's root.
func syntaxOf(t *types.SmiType) (syntax, base string) {
	for ; t != nil; t = smi.GetParentType(t) {
		name := string(t.Name)
		mod := smi.GetTypeModule(t)
		wellKnown := mod == nil || mod.Name == "<well-known>"
		if wellKnown {
			name = asn1Name(t.BaseType)
		}
		if syntax == "" && name != "" {
			syntax = name
		}
		if b, ok := applicationTypes[name]; ok && mod != nil && mod.Name == "SNMPv2-SMI" {
			return syntax, b
		}
		if wellKnown {
			return syntax, asn1Name(t.BaseType)
		}
	}
	return syntax, base
}

// asn1Name is the ASN.1 type under a base type of the library.
func asn1Name(b types.BaseType) string {
	switch b {
	case types.BaseTypeOctetString:
		return BaseOctetString
	case types.BaseTypeObjectIdentifier:
		return BaseOID
	case types.BaseTypeBits:
		return BaseBits
	}
	return BaseInteger
}
