package graph

import (
	"time"

	"github.com/spoold/spoold/rrd"
)

// Options say what Draw draws. With a Template, DS is ignored and the
// template's DEFs are the data sources drawn. Without one, DS empty means
// the file's first data sources, as many as MaxDS and MaxBytes allow. Zero
// Start/End mean the last day; zero Width/Height mean 600×200; zero MaxDS
// and MaxBytes mean DefaultMaxDS and DefaultMaxBytes (see cost.go).
type Options struct {
	DS            []string
	Start, End    time.Time
	Width, Height int
	Title         string
	// Template, when set, is how the graph is drawn (a built-in or a
	// profile's); nil draws each data source of DS as a line. Vars are
	// the values its title and legends name.
	Template *Template
	Vars     Vars
	MaxDS    int   // most data sources drawn (DEFs of a template)
	MaxBytes int64 // most bytes of values librrd may fetch
}

// Draw renders a PNG of the RRD file at path beneath root, whose header
// is fi (every read of the file, librrd's drawing too, opens it beneath
// the root's directory, so it leaves that directory never): the
// data sources o.DS or o.Template's DEFs, each checked against fi, at a
// cost (see cost.go) within o.MaxDS and o.MaxBytes. The caller holds the
// file still (rrdwriter.Writer.Graph calls Draw under the file's lock). A
// data source the file lacks gives an error wrapping ErrNoDataSource; a
// graph beyond the bounds, ErrTooLarge; the messages of both name no path
// (they reach HTTP clients). A range in which the drawn data sources have
// no known value (a file not updated yet, a range before its first poll)
// is drawn with NoDataLegend in place of the legend's values.
func (o Options) Draw(root *rrd.Root, path string, fi rrd.FileInfo) ([]byte, error) {
	return o.draw(root, path, fi, root.Graph)
}

// draw is Draw drawing the rendered call with graph (root.Graph; tests
// record what is drawn).
func (o Options) draw(root *rrd.Root, path string, fi rrd.FileInfo, graph func(string, rrd.GraphCall) ([]byte, error)) ([]byte, error) {
	o.setDefaults(time.Now())
	// Without archives (a header the Go reader cannot read, or no file)
	// the cost is one row per step.
	rras, _ := root.ReadRRAs(path)
	ds, err := graphSelect(fi, rras, o)
	if err != nil {
		return nil, err
	}
	t := o.Template
	if t == nil {
		t = lineTemplate(ds)
	}
	// A fetch that fails draws as if there were data: librrd, drawing,
	// says what is wrong.
	if known, err := rangeHasData(root, path, t, o); err == nil && !known {
		t = t.withoutValues()
	}
	return graph(path, t.render(path, o))
}

// setDefaults fills in what o leaves zero; now is the end of a graph
// without one.
func (o *Options) setDefaults(now time.Time) {
	if o.End.IsZero() {
		o.End = now
	}
	if o.Start.IsZero() {
		o.Start = o.End.Add(-24 * time.Hour)
	}
	if o.Width <= 0 {
		o.Width = 600
	}
	if o.Height <= 0 {
		o.Height = 200
	}
	if o.MaxDS <= 0 {
		o.MaxDS = DefaultMaxDS
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
}
