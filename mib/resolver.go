package mib

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// The reasons a name does not resolve, in a *NameError.
var (
	ErrUnknownName   = errors.New("no loaded module defines it")
	ErrUnknownModule = errors.New("no such module is built in or loaded")
	ErrAmbiguousName = errors.New("defined in more than one module")
)

// NameError is why Resolve refused a name. The caller adds where the name
// was written (file and line); errors.As finds it, errors.Is its reason
// (ErrUnknownName, ErrUnknownModule, ErrAmbiguousName, or a syntax error).
type NameError struct {
	Name    string   // as written: "ifHCInOctetz.3"
	Modules []string // for ErrAmbiguousName: every module defining it, sorted
	Err     error
}

func (e *NameError) Error() string {
	if errors.Is(e.Err, ErrAmbiguousName) {
		return fmt.Sprintf("resolve MIB name %q: defined in %s; write MODULE::%s", e.Name,
			strings.Join(e.Modules, " and "), objectPart(e.Name))
	}
	return fmt.Sprintf("resolve MIB name %q: %v", e.Name, e.Err)
}

func (e *NameError) Unwrap() error { return e.Err }

// Resolver maps MIB names to OIDs and back: the built-in objects plus
// those of the modules loaded from MIB directories. A Resolver is
// immutable once built, so it is safe for concurrent use; a reload builds
// a new one.
type Resolver struct {
	byQualified map[string]*Object   // "IF-MIB::ifIndex"
	byName      map[string][]*Object // "ifIndex": one per module defining it
	byOID       map[string]*Object
	modules     map[string]string // module → the file it came from, "" if built in
}

func newResolver() *Resolver {
	return &Resolver{
		byQualified: map[string]*Object{},
		byName:      map[string][]*Object{},
		byOID:       map[string]*Object{},
		modules:     map[string]string{},
	}
}

// clone returns a Resolver with r's objects, to add more to.
func (r *Resolver) clone() *Resolver {
	c := newResolver()
	for k, o := range r.byQualified {
		c.byQualified[k] = o
	}
	for oid, o := range r.byOID {
		c.byOID[oid] = o
	}
	for k, os := range r.byName {
		c.byName[k] = append([]*Object(nil), os...)
	}
	for m, f := range r.modules {
		c.modules[m] = f
	}
	return c
}

// add adds o, from file ("" if built in), in place of any object of the
// same module and name. The first object seen at an OID names it.
func (r *Resolver) add(o *Object, file string) {
	key := o.QualifiedName()
	if old, ok := r.byQualified[key]; ok {
		list := r.byName[o.Name]
		for i, x := range list {
			if x == old {
				list[i] = o
			}
		}
		if r.byOID[old.OID] == old {
			delete(r.byOID, old.OID)
		}
	} else {
		r.byName[o.Name] = append(r.byName[o.Name], o)
	}
	r.byQualified[key] = o
	if _, ok := r.byOID[o.OID]; !ok {
		r.byOID[o.OID] = o
	}
	r.modules[o.Module] = file
}

// Resolve returns the numeric OID (without a leading dot) of a name in
// any of these forms:
//
//	1.3.6.1.2.1.31.1.1.1.6.3   .1.3.6.1.2.1.1.3.0   numeric
//	IF-MIB::ifHCInOctets       IF-MIB::ifHCInOctets.3
//	ifHCInOctets               sysUpTime.0
//
// A bare name defined by two modules is ambiguous (*NameError naming
// both); so is none an error. An instance suffix is numeric arcs.
func (r *Resolver) Resolve(name string) (string, error) {
	if looksNumeric(name) {
		oid, err := parseOID(name)
		if err != nil {
			return "", &NameError{Name: name, Err: err}
		}
		return oid, nil
	}
	o, suffix, err := r.lookup(name)
	if err != nil {
		return "", err
	}
	if suffix == "" {
		return o.OID, nil
	}
	return o.OID + "." + suffix, nil
}

// Object returns the object a name denotes and the instance suffix
// written after it ("3" for ifHCInOctets.3, "" for none). Numeric names
// give the object whose OID is their longest known prefix.
func (r *Resolver) Object(name string) (*Object, string, error) {
	if looksNumeric(name) {
		oid, err := parseOID(name)
		if err != nil {
			return nil, "", &NameError{Name: name, Err: err}
		}
		o, suffix := r.ObjectAt(oid)
		if o == nil {
			return nil, "", &NameError{Name: name, Err: ErrUnknownName}
		}
		return o, suffix, nil
	}
	return r.lookup(name)
}

func (r *Resolver) lookup(name string) (*Object, string, error) {
	module, rest, qualified := strings.Cut(name, "::")
	object, suffix, _ := strings.Cut(rest, ".")
	if !qualified {
		object, suffix, _ = strings.Cut(name, ".")
	}
	if object == "" || (qualified && module == "") {
		return nil, "", &NameError{Name: name, Err: errors.New("want MODULE::object, object or a numeric OID")}
	}
	arcs := 0
	if suffix != "" || strings.HasSuffix(name, ".") {
		var err error
		if arcs, err = checkArcs(suffix); err != nil {
			return nil, "", &NameError{Name: name, Err: fmt.Errorf("instance suffix: %w", err)}
		}
	}
	o, err := r.find(name, module, object, qualified)
	if err != nil {
		return nil, "", err
	}
	if arcs+strings.Count(o.OID, ".")+1 > maxArcs {
		return nil, "", &NameError{Name: name, Err: fmt.Errorf("more than %d arcs with the instance suffix", maxArcs)}
	}
	return o, suffix, nil
}

// find returns the object of a name's module (if qualified) and object.
func (r *Resolver) find(name, module, object string, qualified bool) (*Object, error) {
	if qualified {
		if _, ok := r.modules[module]; !ok {
			return nil, &NameError{Name: name, Err: fmt.Errorf("module %s: %w", module, ErrUnknownModule)}
		}
		o, ok := r.byQualified[module+"::"+object]
		if !ok {
			return nil, &NameError{Name: name, Err: fmt.Errorf("module %s does not define %s: %w", module, object, ErrUnknownName)}
		}
		return o, nil
	}
	switch list := r.byName[object]; len(list) {
	case 0:
		return nil, &NameError{Name: name, Err: ErrUnknownName}
	case 1:
		return list[0], nil
	default:
		mods := make([]string, len(list))
		for i, o := range list {
			mods[i] = o.Module
		}
		sort.Strings(mods)
		return nil, &NameError{Name: name, Modules: mods, Err: ErrAmbiguousName}
	}
}

// ObjectAt returns the object whose OID is the longest known prefix of
// oid (numeric, with or without a leading dot) and the arcs after it;
// nil if no known object is a prefix.
func (r *Resolver) ObjectAt(oid string) (*Object, string) {
	oid = strings.TrimPrefix(oid, ".")
	for p := oid; p != ""; {
		if o, ok := r.byOID[p]; ok {
			return o, strings.TrimPrefix(oid[len(p):], ".")
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return nil, ""
}

// Name returns the name of a numeric OID for people: "IF-MIB::ifHCInOctets.3"
// from the longest known prefix and the arcs after it, or the OID itself
// (without a leading dot) if no known object is a prefix.
func (r *Resolver) Name(oid string) string {
	o, suffix := r.ObjectAt(oid)
	if o == nil {
		return strings.TrimPrefix(oid, ".")
	}
	if suffix == "" {
		return o.QualifiedName()
	}
	return o.QualifiedName() + "." + suffix
}

// FilterValue returns the value a filter on column compares with, from
// what a profile writes: the number of an enumeration label
// (ifOperStatus=up gives "1"), the numeric OID of a name for an
// OID-valued column (hrStorageType=hrStorageFixedDisk gives
// "1.3.6.1.2.1.25.2.1.4"), and s itself otherwise. A number is accepted
// for an enumeration too.
func (r *Resolver) FilterValue(column *Object, s string) (string, error) {
	switch {
	case column.Enums != nil:
		if v, ok := column.EnumValue(s); ok {
			return strconv.FormatInt(v, 10), nil
		}
		if v, err := strconv.ParseInt(s, 10, 64); err == nil && strconv.FormatInt(v, 10) == s {
			return s, nil
		}
		labels := make([]string, 0, len(column.Enums))
		for _, e := range column.Enums {
			labels = append(labels, e.Label)
		}
		if len(labels) > 12 {
			labels = append(labels[:12], "...")
		}
		return "", fmt.Errorf("filter on %s: %q is not one of its labels (%s) nor a number",
			column.QualifiedName(), s, strings.Join(labels, ", "))
	case column.Base == BaseOID:
		oid, err := r.Resolve(s)
		if err != nil {
			return "", fmt.Errorf("filter on %s: %w", column.QualifiedName(), err)
		}
		return oid, nil
	}
	return s, nil
}

// Modules returns the modules known, each with the file it came from
// ("" for a built-in one).
func (r *Resolver) Modules() map[string]string {
	out := make(map[string]string, len(r.modules))
	for m, f := range r.modules {
		out[m] = f
	}
	return out
}

// Len returns how many objects r knows.
func (r *Resolver) Len() int { return len(r.byQualified) }

// looksNumeric reports whether a name is meant as a numeric OID.
func looksNumeric(s string) bool {
	s = strings.TrimPrefix(s, ".")
	return s != "" && s[0] >= '0' && s[0] <= '9'
}

// objectPart returns the object of a name without module or suffix.
func objectPart(name string) string {
	if _, rest, ok := strings.Cut(name, "::"); ok {
		name = rest
	}
	o, _, _ := strings.Cut(name, ".")
	return o
}
