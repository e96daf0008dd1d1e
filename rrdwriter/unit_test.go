package rrdwriter

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spoold/spoold/spool"
)

func TestRRDPath(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, tc := range []struct{ key, want string }{
		{"router1", "router1.rrd"},
		{"site/router1", "site/router1.rrd"},
		{"../../etc/passwd", "%2E./%2E./etc/passwd.rrd"},
		{"/etc/passwd", "%2Fetc%2Fpasswd.rrd"},
		{"a//b", "a%2F%2Fb.rrd"},
		{"a/", "a%2F.rrd"},
		{"..", "%2E..rrd"},
		{".hidden", "%2Ehidden.rrd"},
		{"x.rrd/y", "x%2Errd/y.rrd"},
		{"sw 1:eth0%", "sw%201%3Aeth0%25.rrd"},
		{"é", "%C3%A9.rrd"},
		{long, long[:200] + "~" + spool.Ref{Hash: spool.KeyHash(long)}.String()[:16] + ".rrd"},
	} {
		t.Run(tc.key[:min(len(tc.key), 20)], func(t *testing.T) {
			got := RRDPath(tc.key)
			if got != tc.want {
				t.Fatalf("RRDPath(%q) = %q, want %q", tc.key, got, tc.want)
			}
			if filepath.IsAbs(got) || filepath.Clean(got) != got {
				t.Fatalf("RRDPath(%q) = %q is not a clean relative path", tc.key, got)
			}
			for _, seg := range strings.Split(got, "/") {
				if seg == "" || seg[0] == '.' || len(seg) > 255 {
					t.Fatalf("RRDPath(%q) has segment %q", tc.key, seg)
				}
			}
		})
	}
}

func FuzzRRDPath(f *testing.F) {
	for _, s := range []string{"a", "a/b", "../x", "/", "x.rrd/y", "", "%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		got := RRDPath(key)
		if filepath.IsAbs(got) || filepath.Clean(got) != got || !strings.HasSuffix(got, ".rrd") {
			t.Fatalf("RRDPath(%q) = %q", key, got)
		}
		segs := strings.Split(got, "/")
		for i, seg := range segs {
			if seg == "" || seg[0] == '.' || (i < len(segs)-1 && strings.HasSuffix(seg, ".rrd")) {
				t.Fatalf("RRDPath(%q) = %q: bad segment %q", key, got, seg)
			}
		}
	})
}

func TestDefaultRRAs(t *testing.T) {
	for _, tc := range []struct {
		step time.Duration
		want string
	}{
		{300 * time.Second, "RRA:AVERAGE:0.5:1:600 RRA:AVERAGE:0.5:6:700 RRA:AVERAGE:0.5:24:775 RRA:AVERAGE:0.5:288:797 RRA:MAX:0.5:1:600 RRA:MAX:0.5:6:700 RRA:MAX:0.5:24:775 RRA:MAX:0.5:288:797"},
		{60 * time.Second, "RRA:AVERAGE:0.5:1:3000 RRA:AVERAGE:0.5:5:600 RRA:AVERAGE:0.5:30:700 RRA:AVERAGE:0.5:120:775 RRA:AVERAGE:0.5:1440:797 RRA:MAX:0.5:5:600 RRA:MAX:0.5:30:700 RRA:MAX:0.5:120:775 RRA:MAX:0.5:1440:797"},
		{2 * time.Second, "RRA:AVERAGE:0.5:1:4000 RRA:AVERAGE:0.5:150:600 RRA:AVERAGE:0.5:900:700 RRA:AVERAGE:0.5:3600:775 RRA:AVERAGE:0.5:43200:797 RRA:MAX:0.5:150:600 RRA:MAX:0.5:900:700 RRA:MAX:0.5:3600:775 RRA:MAX:0.5:43200:797"},
		{time.Hour, "RRA:AVERAGE:0.5:1:50 RRA:AVERAGE:0.5:1:350 RRA:AVERAGE:0.5:2:775 RRA:AVERAGE:0.5:24:797 RRA:MAX:0.5:1:50 RRA:MAX:0.5:1:350 RRA:MAX:0.5:2:775 RRA:MAX:0.5:24:797"},
	} {
		t.Run(tc.step.String(), func(t *testing.T) {
			if got := strings.Join(DefaultRRAs(tc.step), " "); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestProfileValidate(t *testing.T) {
	good := testProfile()
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*Profile){
		"step-fraction": func(p *Profile) { p.Step = 1500 * time.Millisecond },
		"no-rra":        func(p *Profile) { p.RRAs = nil },
		"long-name":     func(p *Profile) { p.DS[0].Name = strings.Repeat("a", 20) },
		"colon":         func(p *Profile) { p.DS[0].Name = "a:b" },
		"dup":           func(p *Profile) { p.DS[1].Name = p.DS[0].Name },
		"type":          func(p *Profile) { p.DS[0].Type = "RATE" },
		"heartbeat":     func(p *Profile) { p.DS[0].Heartbeat = 0 },
	} {
		p := testProfile()
		edit(&p)
		if err := p.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want ErrorKind
	}{
		{errors.New("x.rrd: not a simple unsigned integer: '1.5'"), KindValue},
		{errors.New("x.rrd: found extra data on update argument: 4"), KindValue},
		{errors.New("x.rrd: illegal attempt to update using time 2 when last update time is 2 (minimum one second step)"), KindValue},
		{errors.New("opening 'x.rrd': Permission denied"), KindPermission},
		{fmt.Errorf("create: %w", syscall.EROFS), KindPermission},
		{errors.New("x.rrd: write: No space left on device"), KindNoSpace},
		{errors.New("reached EOF while loading header rrd->stat_head"), KindCorrupt},
		{errors.New("'x.rrd' is not an RRD file"), KindCorrupt},
		{errors.New("something new"), KindOther},
		{kindError(KindMismatch, errors.New("x")), KindMismatch},
	} {
		if got := kindOf(tc.err); got != tc.want {
			t.Errorf("kindOf(%q) = %s, want %s", tc.err, got, tc.want)
		}
	}
}

func TestFormatValue(t *testing.T) {
	for _, tc := range []struct {
		v    spool.Value
		want string
	}{
		{cnt("c", math.MaxUint64), "18446744073709551615"},
		{cnt("c", 0), "0"},
		{gauge("g", 0.1), "0.1"},
		{gauge("g", -2.5e-300), "-2.5e-300"},
		{gauge("g", 1e21), "1e+21"},
		{gauge("g", -1e6), "-1000000"}, // DERIVE takes integers only
		{gauge("g", -(1 << 53)), "-9007199254740992"},
		{gauge("g", 1<<53+2), "9.007199254740994e+15"},
		{gauge("g", math.NaN()), "U"},
		{gauge("g", math.Inf(1)), "U"},
		{spool.Value{Name: "u"}, "U"},
	} {
		if got := formatValue(tc.v); got != tc.want {
			t.Errorf("formatValue(%+v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestBuildRowsPlacesEachValueInItsColumn: values come in any order and
// any subset; each lands in its data source's column, formatted as
// formatValue does, "U" where missing, unknown, or a rate after a restart.
func TestBuildRowsPlacesEachValueInItsColumn(t *testing.T) {
	tg := &target{}
	tg.setInfo(FileInfo{DS: []DSInfo{{"a", Counter}, {"b", Gauge}, {"c", Counter}, {"d", Gauge}}})
	e1 := spool.Entry{Time: 10, Milli: 5, Values: []spool.Value{
		{Name: "c", Type: spool.Counter, Counter: 33}, {Name: "a", Type: spool.Counter, Counter: 1},
		{Name: "d", Type: spool.Gauge, Gauge: 0.25}}}
	e2 := spool.Entry{Time: 20, Flags: spool.FlagDiscontinuity, Values: []spool.Value{
		{Name: "d", Type: spool.Unknown}, {Name: "b", Type: spool.Gauge, Gauge: math.Inf(1)},
		{Name: "a", Type: spool.Counter, Counter: 7}, {Name: "c", Type: spool.Counter, Counter: 12345678901234567890}}}
	e3 := spool.Entry{Time: 30, Values: []spool.Value{{Name: "b", Type: spool.Gauge, Gauge: -1e-300}}}
	rows := buildRows(tg, []item{{e: &e1}, {e: &e2}, {e: &e3}})
	want := [][]string{{"1", "U", "33", "0.25"}, {"U", "U", "U", "U"}, {"U", "-1e-300", "U", "U"}}
	for i, r := range rows {
		if !slices.Equal(r.Values, want[i]) {
			t.Errorf("row %d = %q, want %q", i, r.Values, want[i])
		}
	}
	if rows[0].Time != 10 || rows[0].Milli != 5 || rows[2].Time != 30 {
		t.Errorf("row times %+v", rows)
	}
}

// TestBuildRowsFollowsEachEntrysOrder: entries that repeat the previous
// entry's names reuse its columns, and an entry with the same names in
// another order, or one name changed, gets its own; checkNames names the
// data source the file lacks even after entries that had only known ones.
func TestBuildRowsFollowsEachEntrysOrder(t *testing.T) {
	tg := &target{path: "r.rrd"}
	tg.setInfo(FileInfo{DS: []DSInfo{{"a", Counter}, {"b", Counter}, {"c", Counter}}})
	ent := func(ts int64, kv ...any) *spool.Entry {
		e := &spool.Entry{Time: ts}
		for i := 0; i < len(kv); i += 2 {
			e.Values = append(e.Values, spool.Value{Name: kv[i].(string), Type: spool.Counter, Counter: uint64(kv[i+1].(int))})
		}
		return e
	}
	items := []item{{e: ent(1, "a", 1, "b", 2)}, {e: ent(2, "b", 3, "a", 4)}, {e: ent(3, "b", 5, "a", 6)}, {e: ent(4, "b", 7, "c", 8)}}
	if err := checkNames(tg, items); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"1", "2", "U"}, {"4", "3", "U"}, {"6", "5", "U"}, {"U", "7", "8"}}
	for i, r := range buildRows(tg, items) {
		if !slices.Equal(r.Values, want[i]) {
			t.Errorf("row %d = %q, want %q", i, r.Values, want[i])
		}
	}
	items = append(items, item{e: ent(5, "b", 9, "x", 10)})
	if err := checkNames(tg, items); err == nil || !strings.Contains(err.Error(), `data source "x"`) {
		t.Fatalf("checkNames: %v, want the missing data source x named", err)
	}
}
