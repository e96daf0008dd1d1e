package rrdwriter

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The librrd boundary's logic, in plain Go: file publication, argument
// formatting, the Go header reader first. The C calls themselves are the
// shims of librrd.go (cgo) or librrd_nocgo.go (every call fails), as Go's
// os/user keeps its cgo calls in one small file, so this file is built and
// tested without cgo too.

// LibRRD returns the RRD implementation that calls librrd.
func LibRRD() RRD { return libRRD{} }

type libRRD struct{}

// rrdDS is one data source as rrd_create takes it.
type rrdDS struct {
	name, typ string
	heartbeat int64
	min, max  string
}

// rrdRRA is one RRA as rrd_create takes it: the consolidation function and
// the rest of its definition.
type rrdRRA struct{ cf, args string }

// Create writes the file through a temp file of its own name (librrd's
// rrd_create writes in place) and publishes it with link(2), which never
// replaces a file.
func (libRRD) Create(path string, p Profile, start int64) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("create rrd %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("create rrd directory: %w", err)
	}
	tmp := filepath.Join(filepath.Dir(path), tempName(filepath.Base(path)))
	var ds []rrdDS
	for _, d := range p.DS {
		ds = append(ds, rrdDS{d.Name, string(d.Type), int64(d.Heartbeat / time.Second), formatLimit(d.Min), formatLimit(d.Max)})
	}
	var rras []rrdRRA
	for _, r := range p.RRAs {
		cf, args, ok := strings.Cut(strings.TrimPrefix(r, "RRA:"), ":")
		if !ok {
			return fmt.Errorf("create rrd %s: bad RRA %q", path, r)
		}
		rras = append(rras, rrdRRA{cf, args})
	}
	if err := librrdCreate(tmp, start, uint(p.Step/time.Second), ds, rras); err != nil {
		os.Remove(tmp)
		// librrd says "Cannot create temporary file" without the
		// reason; a probe of the directory gives the system's error, so
		// that a directory spoold may not write is KindPermission.
		if perr := probeCreate(filepath.Dir(path)); perr != nil {
			return fmt.Errorf("create rrd %s: %v: %w", path, err, perr)
		}
		return fmt.Errorf("create rrd %s: %w", path, err)
	}
	// librrd 1.7 reports success when writing the new file failed (a full
	// disk: it removes the file and returns 0); see missingAfterCreate.
	if _, err := os.Stat(tmp); err != nil {
		return missingAfterCreate(path, p, err)
	}
	// Readable by the owner's group (graphing tools), no one else.
	if err := os.Chmod(tmp, 0o640); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("create rrd %s: %w", path, err)
	}
	// link(2) publishes the complete file and never replaces one.
	err := os.Link(tmp, path)
	os.Remove(tmp)
	if err != nil {
		return fmt.Errorf("create rrd %s: %w", path, err)
	}
	return nil
}

// Info reads the header with the Go reader (readHeader): rrd_info_r would
// list every field of it (about 1,700 for 40 data sources and 8 RRAs) into
// a Go map to give the same three facts. A file the Go reader does not
// recognize goes to rrd_info_r, which reads it or says what is wrong.
func (libRRD) Info(path string) (FileInfo, error) {
	fi, err := readHeader(path)
	if err == nil {
		return fi, nil
	}
	if !errors.Is(err, errHeaderUnknown) {
		return FileInfo{}, fmt.Errorf("read rrd info %s: %w", path, err)
	}
	return librrdInfo(path)
}

// librrdInfo reads the header with rrd_info_r.
func librrdInfo(path string) (FileInfo, error) {
	m, err := librrdInfoMap(path)
	if err != nil {
		return FileInfo{}, fmt.Errorf("read rrd info %s: %w", path, err)
	}
	return parseInfo(path, m)
}

func parseInfo(path string, m map[string]any) (FileInfo, error) {
	last, ok1 := m["last_update"].(uint)
	step, ok2 := m["step"].(uint)
	types, ok3 := m["ds.type"].(map[string]any)
	index, ok4 := m["ds.index"].(map[string]any)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return FileInfo{}, fmt.Errorf("read rrd info %s: incomplete header", path)
	}
	fi := FileInfo{Last: int64(last), LastMilli: 999, Step: time.Duration(step) * time.Second}
	for name, t := range types {
		s, _ := t.(string)
		fi.DS = append(fi.DS, DSInfo{Name: name, Type: DSType(s)})
	}
	sort.Slice(fi.DS, func(i, j int) bool {
		a, _ := index[fi.DS[i].Name].(uint)
		b, _ := index[fi.DS[j].Name].(uint)
		return a < b
	})
	return fi, nil
}

// Update formats each row as rrd_update takes it, "<seconds>[.<ms>]:v:v...",
// and hands them to librrd in one call.
func (libRRD) Update(path string, template []string, rows []Row) error {
	if len(rows) == 0 {
		return nil
	}
	bp := updateBufs.Get().(*[]byte)
	defer updateBufs.Put(bp)
	*bp = updateArgs((*bp)[:0], path, template, rows)
	args := 1 + len(rows)
	if len(template) > 0 {
		args++
	}
	// A NUL inside an argument would shift every row after it.
	if bytes.Count(*bp, []byte{0}) != args {
		return fmt.Errorf("update rrd %s: %w", path, errors.New("a path, template or value holds a NUL byte"))
	}
	if err := librrdUpdate(*bp, len(rows), len(template) > 0); err != nil {
		return fmt.Errorf("update rrd %s: %w", path, err)
	}
	return nil
}

// updateBufs holds the buffers of updateArgs: one update's arguments are
// garbage as soon as librrd returns.
var updateBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8192); return &b }}

// updateArgs appends the arguments of one update to b as the update shim
// takes them: the path, the template's names joined by ":" if there is a
// template, and each row, every one NUL-terminated.
func updateArgs(b []byte, path string, template []string, rows []Row) []byte {
	b = append(append(b, path...), 0)
	if len(template) > 0 {
		for i, name := range template {
			if i > 0 {
				b = append(b, ':')
			}
			b = append(b, name...)
		}
		b = append(b, 0)
	}
	for _, r := range rows {
		b = append(appendRow(b, r), 0)
	}
	return b
}

// appendRow appends r as rrd_update and rrdcached's UPDATE take it:
// "<seconds>[.<ms>]:v:v...".
func appendRow(b []byte, r Row) []byte {
	b = strconv.AppendInt(b, r.Time, 10)
	if r.Milli > 0 {
		b = append(b, '.', byte('0'+r.Milli/100), byte('0'+r.Milli/10%10), byte('0'+r.Milli%10))
	}
	for _, v := range r.Values {
		b = append(b, ':')
		b = append(b, v...)
	}
	return b
}

// Graph draws o.Template, or without one each of ds as a line; ds are the
// data sources the template's DEFs name (Writer.Graph checked them).
func (libRRD) Graph(path string, ds []string, o GraphOptions) ([]byte, error) {
	t := o.Template
	if t == nil {
		t = lineTemplate(ds)
	}
	img, err := librrdGraph(t.render(path, o))
	if err != nil {
		return nil, fmt.Errorf("graph rrd %s: %w", path, err)
	}
	if len(img) == 0 {
		return nil, fmt.Errorf("graph rrd %s: %w", path, errors.New("librrd returned no image"))
	}
	return img, nil
}
