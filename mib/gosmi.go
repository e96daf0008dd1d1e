package mib

import (
	"errors"
	"fmt"
	"sort"
	"strings"
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

// buildModules loads the modules named (those of the MIB directories)
// with gosmi, the other modules of srcs as they import them. It returns
// the named modules' objects with OIDs, in module order, how many of the
// modules loaded, and the FileErrors of what did not (loadOne's).
func buildModules(srcs map[string]*source, names []string, partial map[string]map[string]bool) (objs []fileObject, loaded int, errs []error) {
	fsys := memFS{}
	for name, s := range srcs {
		fsys[name] = s.text
	}
	gosmiMu.Lock()
	defer gosmiMu.Unlock()
	if !smi.Init("spoold") {
		return nil, 0, []error{errors.New("initialize the MIB library")}
	}
	defer smi.Exit()
	smi.SetFS(smi.NewNamedFS("mib", fsys))
	for _, name := range names {
		got, problems, ok := loadOne(name, srcs, partial)
		objs, errs = append(objs, got...), append(errs, problems...)
		if ok {
			loaded++
		}
	}
	return objs, loaded, errs
}

// loadOne loads one module and copies its objects. Its errors: the module
// does not load (the parser's error, with its line), an import from a
// module that is not there or of a name a partial (generated) module
// lacks, objects left without a syntax, a panic of gosmi.
func loadOne(name string, srcs map[string]*source, partial map[string]map[string]bool) (objs []fileObject, errs []error, ok bool) {
	s := srcs[name]
	defer func() {
		if p := recover(); p != nil {
			objs, ok = nil, false
			errs = append(errs, &FileError{File: s.file, Err: fmt.Errorf("the MIB library failed: %v", p)})
		}
	}()
	if smi.GetModule(name) == nil {
		return nil, []error{loadError(s)}, false
	}
	mod, err := gosmi.GetModule(name)
	if err != nil {
		return nil, []error{loadError(s)}, false
	}
	missing := false
	for _, imp := range mod.GetImports() {
		defined, isPartial := partial[imp.Module]
		if (srcs[imp.Module] == nil && !smiV1Modules[imp.Module]) || (isPartial && !defined[imp.Name]) {
			errs = append(errs, missingImport(s, name, imp.Name, imp.Module, isPartial))
			missing = true
		}
	}
	var untyped []string
	line := 0
	for _, n := range mod.GetNodes() {
		o := objectOf(name, n)
		if o == nil {
			continue
		}
		objs = append(objs, fileObject{o, s.file})
		if (o.Kind == Scalar || o.Kind == Column) && o.Syntax == "" {
			if untyped = append(untyped, o.Name); line == 0 {
				line = smi.GetNodeLine(n.GetRaw())
			}
		}
	}
	if len(untyped) > 0 && !missing { // else the missing module is the cause
		errs = append(errs, &FileError{File: s.file, Line: line, Err: fmt.Errorf(
			"module %s: the syntax of %s does not resolve (a type it names is unknown, or one defined before it in the module: gosmi then drops the module's later types)",
			name, strings.Join(untyped, ", "))})
	}
	return objs, errs, true
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
// first named type up its chain (INTEGER for an inline enumeration), and
// the SNMPv2-SMI type (or ASN.1 type) at the chain's root.
func syntaxOf(t *types.SmiType) (syntax, base string) {
	for ; t != nil; t = smi.GetParentType(t) {
		name := string(t.Name)
		if t.Decl == types.DeclImplicitType {
			name = "" // an inline refinement, which gosmi names "Enumeration"
		}
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
