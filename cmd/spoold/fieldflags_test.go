package main

import (
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spoold/spoold/internal/optcheck"
)

// TestEveryFieldErrorNamesAFlag: every field a package's Validate names,
// for any one option set out of range (each field of each part tried with
// zero, negative, huge and odd values, locally and with --forward), is in
// fieldFlags with a flag the daemon has, or among the fields no flag sets;
// and every field of the table is named by some such value, so that the
// table holds no field a package no longer checks.
func TestEveryFieldErrorNamesAFlag(t *testing.T) {
	cfg := defaultConfig()
	fs, _ := daemonFlags(&cfg)
	for part, flags := range fieldFlags {
		for field, flag := range flags {
			if fs.Lookup(flag) == nil {
				t.Errorf("%s.%s maps to --%s, which the daemon does not have", part, field, flag)
			}
		}
	}
	seen := map[string]map[string]bool{}
	for _, forward := range []string{"", "tcp:127.0.0.1:1"} {
		base := defaultConfig()
		base.writer.Forward = forward
		for i, p := range base.optionParts() {
			if err := p.validate(); err != nil {
				t.Fatalf("%s with --forward=%q: defaults refused: %v", p.name, forward, err)
			}
			if seen[p.name] == nil {
				seen[p.name] = map[string]bool{}
			}
			probe(reflect.ValueOf(p.options).Elem(), func() {
				err := base.optionParts()[i].validate()
				if err == nil {
					return
				}
				fe := optcheck.As(err)
				if fe == nil {
					t.Errorf("%s: %v is no FieldError", p.name, err)
					return
				}
				for _, f := range append(fe.Refs(), fe.Field) {
					seen[p.name][f] = true
					if fieldFlags[p.name][f] == "" && !slices.Contains(fixedFields[p.name], f) {
						t.Errorf("%s: %v names %s, which maps to no flag", p.name, err, f)
					}
				}
				if msg := flagError(p.name, err).Error(); fieldFlags[p.name][fe.Field] != "" && !strings.HasPrefix(msg, "check --") {
					t.Errorf("%s: %v worded %q", p.name, err, msg)
				}
			})
		}
	}
	for part, flags := range fieldFlags {
		for field := range flags {
			if !seen[part][field] {
				t.Errorf("%s.%s is in the table, but no value made Validate name it", part, field)
			}
		}
	}
}

// probe sets each settable field under v, in turn, to values that are out
// of range for some field (restoring it after), and calls try each time.
func probe(v reflect.Value, try func()) {
	for i := range v.NumField() {
		f := v.Field(i)
		if !f.CanSet() {
			continue
		}
		switch f.Kind() {
		case reflect.Struct:
			probe(f, try)
			continue
		case reflect.Slice:
			if f.Type().Elem().Kind() != reflect.Struct {
				continue
			}
			old := copyOf(f)
			one := reflect.MakeSlice(f.Type(), 1, 1)
			f.Set(one)
			try()
			if s := one.Index(0).FieldByName("Spec"); s.IsValid() {
				s.SetString("tcp:127.0.0.1:0") // a good one, to probe the rest
			}
			probe(one.Index(0), try)
			f.Set(old)
			continue
		}
		old := copyOf(f)
		for _, bad := range probeValues(f) {
			f.Set(bad)
			try()
		}
		f.Set(old)
	}
}

// copyOf returns a copy of f's value.
func copyOf(f reflect.Value) reflect.Value {
	c := reflect.New(f.Type()).Elem()
	c.Set(f)
	return c
}

// probeValues are the values probe tries for a field of f's kind.
func probeValues(f reflect.Value) []reflect.Value {
	var vs []any
	switch f.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		vs = []any{int64(0), int64(-1), int64(1), int64(15), int64(math.MaxInt32), int64(math.MaxInt64)}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		vs = []any{uint64(0), uint64(math.MaxUint32), uint64(99)}
	case reflect.Float32, reflect.Float64:
		vs = []any{0.0, -1.0, 1e-300, math.NaN(), math.Inf(1)}
	case reflect.String:
		vs = []any{"", "x"}
	case reflect.Bool:
		vs = []any{true, false}
	}
	out := make([]reflect.Value, 0, len(vs))
	for _, v := range vs {
		out = append(out, reflect.ValueOf(v).Convert(f.Type()))
	}
	return out
}

// TestFlagErrorsNameTheFlag: what the operator sees for a package's field
// error is the flag and the rule, other fields named as flags too.
func TestFlagErrorsNameTheFlag(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"--poll-cycle-timeout=6m", "check --poll-cycle-timeout: must be 0 to --poll-interval"},
		{"--write-backoff-min=1m --write-backoff-max=1s", "check --write-backoff-max: must be >= --write-backoff-min"},
		{"--forward=tcp:127.0.0.1:1 --rrd-fsync=batch", "check --rrd-fsync: must be none with --forward tcp:127.0.0.1:1 (the RRD files are the remote's)"},
		{"--forward=tcp:127.0.0.1:1 --forward-timeout=0s", "check --forward-timeout: must be positive"},
		{"--writers=0", "check --writers: must be at least 1"},
		{"--segment-max-entries=0", "check --segment-max-entries: must be 1 to 1048576"},
		{"--segment-open-files=-1", "check --segment-open-files: must be 0 to 1048576"},
		{"--loader-files=0", "check --loader-files: must be >= 1, got 0"},
		{"--rrdcached-max-line=1", "check --rrdcached-max-line: must be at least 16"},
		{"--listen-max-connections=-1 --listen=tcp:127.0.0.1:0", "check --listen-max-connections: must be >= 0, got -1 for tcp:127.0.0.1:0"},
		{"--poll-interval=0s", "check --poll-interval: must be at least 1s"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			cfg := defaultConfig()
			fs, _ := daemonFlags(&cfg)
			fs.SetOutput(io.Discard)
			if err := fs.Parse(strings.Fields(tc.args)); err != nil {
				t.Fatal(err)
			}
			if err := cfg.check(); err == nil || err.Error() != tc.want {
				t.Fatalf("check = %v, want %q", err, tc.want)
			}
		})
	}
}
