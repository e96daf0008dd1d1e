package rrd

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// GraphCall is one rrd_graph call: the range, the size, the texts, and the
// options and elements in rrdgraph's syntax. The same arguments drawn by
// the rrdtool command (CLI) give the same graph.
type GraphCall struct {
	Start, End    time.Time
	Width, Height int
	Title, VLabel string
	Args          []string
}

// CLI returns the arguments of `rrdtool graph` drawing c into file.
func (c GraphCall) CLI(file string) []string {
	return append([]string{"graph", file,
		"--start", strconv.FormatInt(c.Start.Unix(), 10), "--end", strconv.FormatInt(c.End.Unix(), 10),
		"--width", strconv.Itoa(c.Width), "--height", strconv.Itoa(c.Height),
		"--title", c.Title, "--vertical-label", c.VLabel}, c.Args...)
}

// Graph renders c as a PNG of the file at path: every DEF of c.Args must
// name that file as "DEF:<vname>=<path, its colons escaped
// (EscapeColons)>:...", and librrd reads it by its descriptor opened
// beneath the directory, so a graph reads that one file, confined, and no
// other (a DEF naming another file is refused, nothing drawn). librrd's
// rrd_graph is not thread-safe: calls are serialized.
func (r *Root) Graph(p string, c GraphCall) ([]byte, error) {
	var img []byte
	err := r.with(p, func(open string) (err error) {
		if c.Args, err = defsOpening(p, open, c.Args); err != nil {
			return err
		}
		img, err = librrdGraph(c)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("graph rrd %s: %w", p, err)
	}
	if len(img) == 0 {
		return nil, fmt.Errorf("graph rrd %s: %w", p, errors.New("librrd returned no image"))
	}
	return img, nil
}

// defsOpening returns args with the file of each DEF, which must be path,
// replaced by open.
func defsOpening(path, open string, args []string) ([]string, error) {
	out := slices.Clone(args)
	file, by := "="+EscapeColons(path)+":", "="+EscapeColons(open)+":"
	for i, a := range out {
		rest, ok := strings.CutPrefix(a, "DEF:")
		if !ok {
			continue
		}
		vname, def, ok := strings.Cut(rest, file)
		if !ok || strings.Contains(vname, "=") {
			return nil, fmt.Errorf("%q draws another file than the graph's", a)
		}
		out[i] = "DEF:" + vname + by + def
	}
	return out, nil
}

// EscapeColons escapes the colons of a text or path as rrdgraph reads them
// in an element: "\:".
func EscapeColons(s string) string { return strings.ReplaceAll(s, ":", `\:`) }
