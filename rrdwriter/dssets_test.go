package rrdwriter

import (
	"fmt"
	"testing"

	"github.com/spoold/spoold/rrd"
)

// TestDataSourcesShareOneListAProfile: the files of one profile hold one
// copy of their data sources and index between them; a file whose list
// differs (another order, another type, a data source more) gets its own,
// indexed by its own positions; the caller's slice is never kept.
func TestDataSourcesShareOneListAProfile(t *testing.T) {
	var d dataSources
	list := func() []rrd.DSInfo {
		return []rrd.DSInfo{{Name: "in", Type: rrd.Counter}, {Name: "out", Type: rrd.Counter}, {Name: "temp", Type: rrd.Gauge}}
	}
	a, b := &fileState{}, &fileState{}
	la := list()
	a.setInfo(rrd.FileInfo{Last: 100, DS: la}, &d)
	b.setInfo(rrd.FileInfo{Last: 200, DS: list()}, &d)
	if &a.info.DS[0] != &b.info.DS[0] {
		t.Error("two files of the same data sources hold a copy each")
	}
	if a.info.Last != 100 || b.info.Last != 200 {
		t.Errorf("last updates %d, %d; want each file's own, 100 and 200", a.info.Last, b.info.Last)
	}
	la[0].Name = "changed"
	if a.info.DS[0].Name != "in" || a.index["in"] != 0 {
		t.Errorf("the kept list follows the caller's slice: %+v", a.info.DS)
	}
	others := map[string][]rrd.DSInfo{
		"order": {{Name: "temp", Type: rrd.Gauge}, {Name: "in", Type: rrd.Counter}, {Name: "out", Type: rrd.Counter}},
		"type":  {{Name: "in", Type: rrd.Derive}, {Name: "out", Type: rrd.Counter}, {Name: "temp", Type: rrd.Gauge}},
		"more":  append(list(), rrd.DSInfo{Name: "errors", Type: rrd.Counter}),
	}
	for name, ds := range others {
		c := &fileState{}
		c.setInfo(rrd.FileInfo{DS: ds}, &d)
		if &c.info.DS[0] == &a.info.DS[0] {
			t.Errorf("%s: a different list shares the profile's", name)
		}
		for i, v := range ds {
			if c.index[v.Name] != i || c.info.DS[i] != v {
				t.Errorf("%s: %s at %d in the index, %+v in the list; want %d, %+v", name, v.Name, c.index[v.Name], c.info.DS[i], i, v)
			}
		}
	}
}

// TestDataSourcesBound: beyond maxDataSourceSets lists, a new list is
// used by its file alone, not kept, and still indexed right.
func TestDataSourcesBound(t *testing.T) {
	var d dataSources
	for i := range maxDataSourceSets + 10 {
		ds := []rrd.DSInfo{{Name: fmt.Sprintf("ds%d", i), Type: rrd.Gauge}}
		s := d.of(ds)
		if s.index[ds[0].Name] != 0 || len(s.ds) != 1 {
			t.Fatalf("list %d indexed %v", i, s.index)
		}
	}
	if d.n != maxDataSourceSets {
		t.Errorf("kept %d lists; want the bound, %d", d.n, maxDataSourceSets)
	}
	first := []rrd.DSInfo{{Name: "ds0", Type: rrd.Gauge}}
	if d.of(first) != d.of(first) {
		t.Error("a list kept before the bound is not shared after it")
	}
}
