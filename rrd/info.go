package rrd

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// FileInfo describes an existing RRD file.
type FileInfo struct {
	Last int64 // last update, Unix seconds
	// LastMilli are the milliseconds of the last update (librrd keeps
	// microseconds); 999 when only whole seconds are known, so that an
	// entry of that second counts as applied.
	LastMilli uint16
	Step      time.Duration // base interval
	DS        []DSInfo      // in the file's order
}

// DSInfo is a data source of an existing RRD file.
type DSInfo struct {
	Name string
	Type DSType
}

// InfoFD is Info of the file open for reading at fd (one opened beneath
// a Root, say), which path names in errors: the header is read at fd, and
// a file the Go reader does not recognize goes to rrd_info_r through
// /proc/self/fd.
func InfoFD(fd int, path string) (FileInfo, error) {
	err := LockForRead(fd)
	if err == nil {
		var fi FileInfo
		if fi, err = readHeaderAt(fd, path); err == nil {
			return fi, nil
		}
	}
	if !errors.Is(err, ErrHeaderUnknown) {
		return FileInfo{}, fmt.Errorf("read rrd info %s: %w", path, err)
	}
	return infoByLibrrd(path, ProcPath(fd))
}

// infoByLibrrd reads the header with rrd_info_r.
func infoByLibrrd(path, open string) (FileInfo, error) {
	items, err := librrdInfo(open)
	if err != nil {
		return FileInfo{}, fmt.Errorf("read rrd info %s: %w", path, err)
	}
	return parseInfo(path, items)
}

// parseInfo picks the last update, the step and the data sources (in the
// order of their index) out of rrd_info_r's items.
func parseInfo(path string, items []InfoItem) (FileInfo, error) {
	var last, step *uint64
	types := map[string]string{}
	index := map[string]uint64{}
	for i := range items {
		it := &items[i]
		name, field, isDS := dsItem(it.Key)
		switch {
		case it.Key == "last_update" && it.Type == InfoCnt:
			last = &it.Cnt
		case it.Key == "step" && it.Type == InfoCnt:
			step = &it.Cnt
		case isDS && field == "type":
			types[name] = it.Str
		case isDS && field == "index" && it.Type == InfoCnt:
			index[name] = it.Cnt
		}
	}
	if last == nil || step == nil || len(types) == 0 || len(index) == 0 {
		return FileInfo{}, fmt.Errorf("read rrd info %s: incomplete header", path)
	}
	fi := FileInfo{Last: int64(*last), LastMilli: 999, Step: time.Duration(*step) * time.Second}
	for name, t := range types {
		fi.DS = append(fi.DS, DSInfo{Name: name, Type: DSType(t)})
	}
	sort.Slice(fi.DS, func(i, j int) bool { return index[fi.DS[i].Name] < index[fi.DS[j].Name] })
	return fi, nil
}

// dsItem splits an rrd_info_r key "ds[<name>].<field>".
func dsItem(key string) (name, field string, ok bool) {
	rest, ok := strings.CutPrefix(key, "ds[")
	if !ok {
		return "", "", false
	}
	name, field, ok = strings.Cut(rest, "].")
	return name, field, ok
}
