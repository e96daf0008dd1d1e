//go:build cgo

package graph

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/testenv"
	"github.com/spoold/spoold/rrd"
)

// legends draws o from the file at path with librrd through Draw, and
// returns the legend librrd lays out for that same call (`rrdtool graphv`,
// its legend[i] entries), one text after another.
func legends(t *testing.T, path string, o Options) string {
	t.Helper()
	root := rootOf(t, path)
	fi, err := root.Info(path)
	if err != nil {
		t.Fatal(err)
	}
	var call rrd.GraphCall
	img, err := o.draw(root, path, fi, func(path string, c rrd.GraphCall) ([]byte, error) {
		call = c
		return root.Graph(path, c)
	})
	if err != nil || !bytes.HasPrefix(img, []byte("\x89PNG")) {
		t.Fatalf("librrd drew %.8q: %v", img, err)
	}
	args := append([]string{"graphv"}, call.CLI("/dev/null")[1:]...)
	var texts []string
	for _, m := range regexp.MustCompile(`(?m)^legend\[\d+\] = "(.*)"$`).FindAllStringSubmatch(testenv.RRDTool(t, args...), -1) {
		texts = append(texts, strings.Join(strings.Fields(m[1]), " "))
	}
	if len(texts) == 0 {
		t.Fatalf("rrdtool graphv %q shows no legend", args)
	}
	return strings.Join(texts, " | ")
}

// TestEmptyRangeSaysNoDataYet draws, with librrd, a file not updated yet
// and a range before a file's polls: the legend says "no data yet" and
// shows no value (no nan, no inf), with the data sources' names still
// there; a range with the polls shows its values and not the words.
func TestEmptyRangeSaysNoDataYet(t *testing.T) {
	dir := t.TempDir()
	fresh, polled := keyFile(dir, "sw1/ge-0_0_1"), keyFile(dir, "sw1/ge-0_0_2")
	if err := rootOf(t, fresh).Create(fresh, ifRowLayout(), t0); err != nil {
		t.Fatal(err)
	}
	writeRows(t, polled, ifRowLayout())
	traffic, _ := Builtin("traffic")
	start, end := graphRange()
	before := Options{Start: start.Add(-6 * time.Hour), End: start}
	for _, c := range []struct {
		name   string
		path   string
		o      Options
		noData bool
	}{
		{"fresh traffic", fresh, Options{Template: traffic, Start: start, End: end}, true},
		{"fresh lines", fresh, Options{DS: []string{"in", "out"}, Start: start, End: end}, true},
		{"before the polls", polled, Options{Template: traffic, Start: before.Start, End: before.End}, true},
		{"the polls", polled, Options{Template: traffic, Start: start, End: end}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			texts := legends(t, c.path, c.o)
			lower := strings.ToLower(texts)
			if c.noData != strings.Contains(texts, NoDataLegend) || c.noData && (strings.Contains(lower, "nan") || strings.Contains(lower, "inf")) {
				t.Errorf("librrd drew %q; want %q %v and no nan or inf", texts, NoDataLegend, c.noData)
			}
			if !strings.Contains(texts, "In") && !strings.Contains(texts, "in") {
				t.Errorf("librrd drew %q, without the data sources' legends", texts)
			}
			if !c.noData && !regexp.MustCompile(`avg \d+\.\d [kM]?b/s`).MatchString(texts) {
				t.Errorf("librrd drew %q, want the values of the polls", texts)
			}
		})
	}
}
