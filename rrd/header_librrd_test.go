//go:build cgo

package rrd

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// TestReadHeaderMatchesLibRRD checks the Go header reader against
// rrd_info_r and, independently, against the rrdtool command, on files
// made by `rrdtool create` directly and by Create, before and after
// updates.
func TestReadHeaderMatchesLibRRD(t *testing.T) {
	testenv.NeedRRDTool(t)
	many := []string{"--step", "60"}
	for i := range 100 { // 12 KB of ds_def: the reader needs a second pread
		many = append(many, fmt.Sprintf("DS:d%03d:GAUGE:120:U:U", i))
	}
	many = append(many, "RRA:AVERAGE:0.5:1:10", "RRA:MAX:0.5:5:10")
	for _, tc := range []struct {
		name    string
		args    []string // rrdtool create arguments after the path and --start
		updates []string // rrdtool update arguments
		version string   // rrd_version rrdtool makes of them
	}{
		{"counter and gauge", []string{"--step", "300", "DS:in:COUNTER:600:0:U", "DS:load:GAUGE:600:U:U", "RRA:AVERAGE:0.5:1:10"},
			[]string{"1700000300:100:0.5", "1700000601:400:1.25"}, "0003"},
		{"every type", []string{"DS:c:COUNTER:600:0:U", "DS:d:DERIVE:600:U:U", "DS:a:ABSOLUTE:600:U:U", "DS:g:GAUGE:600:U:U",
			"DS:sum:COMPUTE:c,d,+", "RRA:AVERAGE:0.5:1:10", "RRA:LAST:0.5:1:10"}, []string{"--template", "g:c", "1700000300.25:1:2"}, "0003"},
		{"dcounter (version 5)", []string{"DS:x:DCOUNTER:600:U:U", "DS:y:DDERIVE:600:U:U", "RRA:AVERAGE:0.5:1:10"},
			[]string{"1700000300:1.5:2.5"}, "0005"},
		{"holt-winters (version 4)", []string{"DS:x:GAUGE:600:U:U", "RRA:AVERAGE:0.5:1:100", "RRA:MHWPREDICT:100:0.1:0.0035:20"},
			[]string{"1700000300:1", "1700000600:2"}, "0004"},
		{"100 data sources", many, []string{"1700000060:" + strings.TrimSuffix(strings.Repeat("1:", 100), ":")}, "0003"},
		{"never updated", []string{"DS:x:GAUGE:600:U:U", "RRA:AVERAGE:0.5:1:10"}, nil, "0003"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.rrd")
			testenv.RRDTool(t, append([]string{"create", path, "--start", "1700000000"}, tc.args...)...)
			checkHeader(t, path)
			if v := fmt.Sprintf("rrd_version = %q\n", tc.version); !strings.Contains(testenv.RRDTool(t, "info", path), v) {
				t.Fatalf("rrdtool info lacks %s", v)
			}
			if len(tc.updates) > 0 {
				testenv.RRDTool(t, append([]string{"update", path}, tc.updates...)...)
				fi := checkHeader(t, path)
				wantMilli := uint16(0)
				if strings.HasPrefix(tc.updates[len(tc.updates)-1], "1700000300.25:") {
					wantMilli = 250
				}
				if fi.LastMilli != wantMilli {
					t.Fatalf("last update's milliseconds %d, want %d", fi.LastMilli, wantMilli)
				}
			}
		})
	}
	t.Run("Create", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "f.rrd")
		if err := pathCreate(path, testLayout(), t0); err != nil {
			t.Fatal(err)
		}
		checkHeader(t, path)
		if err := pathUpdate(path, []string{"g", "c"}, []Sample{{Time: t0 + 300, Values: []string{"1", "2"}}}); err != nil {
			t.Fatal(err)
		}
		if fi := checkHeader(t, path); fi.Last != t0+300 || len(fi.DS) != 2 || fi.DS[0] != (DSInfo{"c", Counter}) {
			t.Fatalf("header %+v", fi)
		}
	})
}

// checkHeader compares readHeader with rrd_info_r and `rrdtool last` and
// `rrdtool info`, and returns what it read.
func checkHeader(t *testing.T, path string) FileInfo {
	t.Helper()
	got, err := pathReadHeader(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := infoByLibrrd(path, path)
	if err != nil {
		t.Fatal(err)
	}
	if want.LastMilli != 999 {
		t.Fatalf("rrd_info_r gave milliseconds %d; it knows whole seconds only", want.LastMilli)
	}
	want.LastMilli = got.LastMilli // rrd_info_r has no last_up_usec; checked below
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Go reader %+v, rrd_info_r %+v", got, want)
	}
	last, err := strconv.ParseInt(strings.TrimSpace(testenv.RRDTool(t, "last", path)), 10, 64)
	if err != nil || last != got.Last {
		t.Fatalf("rrdtool last %d (%v), Go reader %d", last, err, got.Last)
	}
	info := testenv.RRDTool(t, "info", path)
	for i, ds := range got.DS {
		for _, s := range []string{fmt.Sprintf("ds[%s].index = %d\n", ds.Name, i), fmt.Sprintf("ds[%s].type = %q\n", ds.Name, ds.Type)} {
			if !strings.Contains(info, s) {
				t.Fatalf("rrdtool info lacks %q", s)
			}
		}
	}
	if s := fmt.Sprintf("step = %d\n", int64(got.Step.Seconds())); !strings.Contains(info, s) {
		t.Fatalf("rrdtool info lacks %q", s)
	}
	return got
}

// TestLastMilliSurvivesLibrrdRounding: librrd keeps an update's fraction as
// a double truncated to microseconds (811.123 may become 811.122999); the
// header reader gives back the millisecond the writer sent, for every one,
// or the writer would take an applied entry for a new one.
func TestLastMilliSurvivesLibrrdRounding(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.rrd")
	const base = 1_796_116_800
	if err := pathCreate(path, testLayout(), base); err != nil {
		t.Fatal(err)
	}
	for ms := uint16(1); ms <= 999; ms++ {
		row := Sample{Time: base + int64(ms), Milli: ms, Values: []string{"1", "2"}}
		if err := pathUpdate(path, []string{"c", "g"}, []Sample{row}); err != nil {
			t.Fatal(err)
		}
		fi, err := pathReadHeader(path)
		if err != nil || fi.Last != row.Time || fi.LastMilli != ms {
			t.Fatalf("after an update at %d.%03d: header %d.%03d, %v", row.Time, ms, fi.Last, fi.LastMilli, err)
		}
	}
}
