package rrd

import (
	"errors"
	"fmt"
	"strconv"
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

// Graph renders c as a PNG; path, the file c draws, names it in errors.
// librrd's rrd_graph is not thread-safe: calls are serialized.
func Graph(path string, c GraphCall) ([]byte, error) {
	img, err := librrdGraph(c)
	if err != nil {
		return nil, fmt.Errorf("graph rrd %s: %w", path, err)
	}
	if len(img) == 0 {
		return nil, fmt.Errorf("graph rrd %s: %w", path, errors.New("librrd returned no image"))
	}
	return img, nil
}
