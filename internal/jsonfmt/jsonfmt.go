// Package jsonfmt owns the JSON rules of spoold's /status document that
// encoding/json does not apply by itself: a time is RFC 3339 in UTC, or
// null when zero; a duration is a number of seconds (its member's name
// ends in _seconds). A package's Stats type names its members with struct
// tags, as encoding/json reads them, and renders itself with Marshal,
// which applies these rules to every time.Time and time.Duration field.
package jsonfmt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"time"
)

// Time is a time in JSON: RFC 3339 in UTC with the fraction it has, or
// null when zero (not happened yet).
type Time time.Time

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) {
	tt := time.Time(t)
	if tt.IsZero() {
		return []byte("null"), nil
	}
	return []byte(strconv.Quote(tt.UTC().Format(time.RFC3339Nano))), nil
}

// Seconds is a duration in JSON: a number of seconds.
type Seconds time.Duration

// MarshalJSON implements json.Marshaler.
func (d Seconds) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, time.Duration(d).Seconds(), 'f', -1, 64), nil
}

var (
	timeType     = reflect.TypeFor[time.Time]()
	durationType = reflect.TypeFor[time.Duration]()
	forms        sync.Map // reflect.Type of a struct → reflect.Type of its JSON form
)

// Marshal renders the struct v as encoding/json does by its tags, except
// that its time.Time fields are rendered as Time and its time.Duration
// fields as Seconds, followed by the members of each of extra (structs
// rendered the same way): the members its type computes. v's own
// MarshalJSON is not called, so a MarshalJSON may return Marshal(itself).
func Marshal(v any, extra ...any) ([]byte, error) {
	objs := make([][]byte, 0, 1+len(extra))
	for _, x := range append([]any{v}, extra...) {
		b, err := marshalStruct(x)
		if err != nil {
			return nil, err
		}
		objs = append(objs, b)
	}
	return Join(objs...)
}

func marshalStruct(v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Struct {
		return nil, fmt.Errorf("marshal %T: not a struct", v)
	}
	return json.Marshal(formValue(rv).Interface())
}

// formValue is the struct rv in its JSON form (formOf).
func formValue(rv reflect.Value) reflect.Value {
	form := reflect.New(formOf(rv.Type())).Elem()
	for i := range rv.NumField() {
		f := rv.Field(i)
		switch {
		case f.Type() == timeType:
			form.Field(i).Set(reflect.ValueOf(Time(f.Interface().(time.Time))))
		case f.Type() == durationType:
			form.Field(i).Set(reflect.ValueOf(Seconds(f.Interface().(time.Duration))))
		case embedsStruct(rv.Type().Field(i)):
			form.Field(i).Set(formValue(f))
		default:
			form.Field(i).Set(f)
		}
	}
	return form
}

// embedsStruct reports whether f is an embedded struct, whose fields
// encoding/json shows as its outer struct's: they take its rules too
// (exported ones only: reflect builds no struct that embeds an unexported
// type).
func embedsStruct(f reflect.StructField) bool {
	return f.Anonymous && f.IsExported() && f.Type.Kind() == reflect.Struct && f.Type != timeType
}

// formOf is t with Time for time.Time and Seconds for time.Duration, in
// its embedded structs too, the tags kept, and no methods (so no
// MarshalJSON).
func formOf(t reflect.Type) reflect.Type {
	if f, ok := forms.Load(t); ok {
		return f.(reflect.Type)
	}
	fields := make([]reflect.StructField, t.NumField())
	for i := range fields {
		f := t.Field(i)
		switch {
		case f.Type == timeType:
			f.Type = reflect.TypeFor[Time]()
		case f.Type == durationType:
			f.Type = reflect.TypeFor[Seconds]()
		case embedsStruct(f):
			f.Type = formOf(f.Type)
		}
		fields[i] = f
	}
	f, _ := forms.LoadOrStore(t, reflect.StructOf(fields))
	return f.(reflect.Type)
}

// Join returns the members of the JSON objects objs as one object, in
// order.
func Join(objs ...[]byte) ([]byte, error) {
	out := []byte{'{'}
	for _, o := range objs {
		o = bytes.TrimSpace(o)
		if len(o) < 2 || o[0] != '{' || o[len(o)-1] != '}' {
			return nil, errors.New("join JSON: not an object")
		}
		members := bytes.TrimSpace(o[1 : len(o)-1])
		if len(members) == 0 {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, members...)
	}
	return append(out, '}'), nil
}
