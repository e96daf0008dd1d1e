package rrdwriter

import (
	"slices"
	"sync"

	"github.com/cespare/xxhash/v2"

	"github.com/spoold/spoold/rrd"
)

// maxDataSourceSets bounds the lists of data sources dataSources keeps.
const maxDataSourceSets = 4096

// dataSources keeps one copy of each list of data sources the writer's
// files have, with its index by name: the files of one profile, most of
// a writer's, share it instead of each holding its own (about 2 KB a
// file of 40 data sources, kept as long as the writer knows the file).
// Beyond maxDataSourceSets lists a file with a list not kept yet holds
// its own. The lists are never changed once kept. Safe for concurrent
// use.
type dataSources struct {
	mu   sync.Mutex
	sets map[uint64][]*dsSet // by dsHash
	n    int
}

// dsSet is one list of data sources and its index.
type dsSet struct {
	ds    []rrd.DSInfo
	index map[string]int // name → position in ds
}

// of returns the kept set equal to ds, keeping a copy of ds if there is
// none yet.
func (d *dataSources) of(ds []rrd.DSInfo) *dsSet {
	h := dsHash(ds)
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range d.sets[h] {
		if slices.Equal(s.ds, ds) {
			return s
		}
	}
	s := &dsSet{ds: slices.Clone(ds), index: make(map[string]int, len(ds))}
	for i, v := range s.ds {
		s.index[v.Name] = i
	}
	if d.n < maxDataSourceSets {
		if d.sets == nil {
			d.sets = map[uint64][]*dsSet{}
		}
		d.sets[h] = append(d.sets[h], s)
		d.n++
	}
	return s
}

func dsHash(ds []rrd.DSInfo) uint64 {
	var d xxhash.Digest
	d.Reset()
	for _, v := range ds {
		d.WriteString(v.Name)
		d.WriteString("\x00")
		d.WriteString(string(v.Type))
		d.WriteString("\x00")
	}
	return d.Sum64()
}
