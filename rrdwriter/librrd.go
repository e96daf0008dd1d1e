//go:build cgo

package rrdwriter

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ziutek/rrd"
)

// This is the only file that calls librrd. github.com/ziutek/rrd v0.0.3
// calls the thread-safe rrd_create_r, rrd_update_r and rrd_info_r, and
// copies librrd's thread-local error string before returning to Go, so
// those are safe from any goroutine on different files. rrd_graph_v is not
// thread-safe: ziutek serializes it with a package mutex. An update error is
// librrd's message only: which rows landed is learned by reading the last
// update time again (rrd_update_r applies rows in order and stops at the
// first bad one).

// LibRRD returns the RRD implementation that calls librrd.
func LibRRD() RRD { return libRRD{} }

type libRRD struct{}

func (libRRD) Create(path string, p Profile, start int64) error {
	if err := p.Validate(); err != nil {
		return fmt.Errorf("create rrd %s: %w", path, err)
	}
	tmp := filepath.Join(filepath.Dir(path), tempName(filepath.Base(path)))
	c := rrd.NewCreator(tmp, time.Unix(start, 0), uint(p.Step/time.Second))
	for _, ds := range p.DS {
		c.DS(ds.Name, string(ds.Type), int64(ds.Heartbeat/time.Second), formatLimit(ds.Min), formatLimit(ds.Max))
	}
	for _, r := range p.RRAs {
		cf, args, ok := strings.Cut(strings.TrimPrefix(r, "RRA:"), ":")
		if !ok {
			return fmt.Errorf("create rrd %s: bad RRA %q", path, r)
		}
		c.RRA(cf, args)
	}
	if err := c.Create(true); err != nil {
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
	m, err := rrd.Info(path)
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

func (libRRD) Update(path string, template []string, rows []Row) error {
	if len(rows) == 0 {
		return nil
	}
	u := rrd.NewUpdater(path)
	if len(template) > 0 {
		u.SetTemplate(template...)
	}
	var b []byte
	for _, r := range rows {
		b = strconv.AppendInt(b[:0], r.Time, 10)
		if r.Milli > 0 {
			b = append(b, '.', byte('0'+r.Milli/100), byte('0'+r.Milli/10%10), byte('0'+r.Milli%10))
		}
		for _, v := range r.Values {
			b = append(b, ':')
			b = append(b, v...)
		}
		u.Cache(string(b))
	}
	if err := u.Update(); err != nil {
		return fmt.Errorf("update rrd %s: %w", path, err)
	}
	return nil
}

var graphColors = []string{"0000FF", "00A000", "FF0000", "A000A0", "FF8000", "00A0A0", "808000", "404040"}

func (libRRD) Graph(path string, ds []string, o GraphOptions) ([]byte, error) {
	g := rrd.NewGrapher()
	g.SetTitle(o.Title)
	g.SetSize(uint(o.Width), uint(o.Height))
	def := strings.ReplaceAll(path, ":", `\:`)
	for i, name := range ds {
		v := "v" + strconv.Itoa(i)
		g.Def(v, def, name, "AVERAGE")
		g.Line(1, v, graphColors[i%len(graphColors)], name)
	}
	_, img, err := g.Graph(o.Start, o.End)
	if err != nil {
		return nil, fmt.Errorf("graph rrd %s: %w", path, err)
	}
	if len(img) == 0 {
		return nil, fmt.Errorf("graph rrd %s: %w", path, errors.New("librrd returned no image"))
	}
	return img, nil
}
