package rrdwriter

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/spool"
)

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
	tg := &fileState{}
	tg.setInfo(rrd.FileInfo{DS: []rrd.DSInfo{{Name: "a", Type: rrd.Counter}, {Name: "b", Type: rrd.Gauge}, {Name: "c", Type: rrd.Counter}, {Name: "d", Type: rrd.Gauge}}}, &dataSources{})
	e1 := spool.Entry{Time: 10, Milli: 5, Values: []spool.Value{
		{Name: "c", Type: spool.Counter, Counter: 33}, {Name: "a", Type: spool.Counter, Counter: 1},
		{Name: "d", Type: spool.Gauge, Gauge: 0.25}}}
	e2 := spool.Entry{Time: 20, Flags: spool.FlagDiscontinuity, Values: []spool.Value{
		{Name: "d", Type: spool.Unknown}, {Name: "b", Type: spool.Gauge, Gauge: math.Inf(1)},
		{Name: "a", Type: spool.Counter, Counter: 7}, {Name: "c", Type: spool.Counter, Counter: 12345678901234567890}}}
	e3 := spool.Entry{Time: 30, Values: []spool.Value{{Name: "b", Type: spool.Gauge, Gauge: -1e-300}}}
	rows := buildRows(tg, []item{{e: &e1}, {e: &e2}, {e: &e3}}, new(rowScratch))
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
	tg := &fileState{key: "r"}
	tg.setInfo(rrd.FileInfo{DS: []rrd.DSInfo{{Name: "a", Type: rrd.Counter}, {Name: "b", Type: rrd.Counter}, {Name: "c", Type: rrd.Counter}}}, &dataSources{})
	ent := func(ts int64, kv ...any) *spool.Entry {
		e := &spool.Entry{Time: ts}
		for i := 0; i < len(kv); i += 2 {
			e.Values = append(e.Values, spool.Value{Name: kv[i].(string), Type: spool.Counter, Counter: uint64(kv[i+1].(int))})
		}
		return e
	}
	items := []item{{e: ent(1, "a", 1, "b", 2)}, {e: ent(2, "b", 3, "a", 4)}, {e: ent(3, "b", 5, "a", 6)}, {e: ent(4, "b", 7, "c", 8)}}
	if err := checkNames(tg, "r.rrd", items); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"1", "2", "U"}, {"4", "3", "U"}, {"6", "5", "U"}, {"U", "7", "8"}}
	for i, r := range buildRows(tg, items, new(rowScratch)) {
		if !slices.Equal(r.Values, want[i]) {
			t.Errorf("row %d = %q, want %q", i, r.Values, want[i])
		}
	}
	items = append(items, item{e: ent(5, "b", 9, "x", 10)})
	if err := checkNames(tg, "r.rrd", items); err == nil || !strings.Contains(err.Error(), `data source "x"`) {
		t.Fatalf("checkNames: %v, want the missing data source x named", err)
	}
}
