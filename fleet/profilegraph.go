package fleet

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spoold/spoold/graph"
)

// Graph templates in a profiles file: a "graph <name>" line inside a
// profile and the lines after it whose keyword is one of
// graph.IsKeyword's, parsed by graph.ParseTemplate (the
// one owner of the syntax) and kept on the profile (Profile.Graphs).

// maxProfileGraphs bounds a profile's graph templates.
const maxProfileGraphs = 64

// graphBlockLen returns how many of lines belong to the graph block
// before them: those whose keyword is a graph keyword.
func graphBlockLen(lines []configLine) int {
	n := 0
	for n < len(lines) && graph.IsKeyword(lines[n].fields[0]) {
		n++
	}
	return n
}

// graph parses the graph block of header and adds it to the current
// profile. Its errors name the line at fault.
func (pp *profileParser) graph(header configLine, block []configLine) error {
	if pp.cur == nil {
		return errors.New(`"graph" before the first "profile" line`)
	}
	gl := make([]graph.SourceLine, len(block))
	for i, l := range block {
		gl[i] = graph.SourceLine{Line: l.n, Text: l.text}
	}
	g, err := graph.ParseTemplate(pp.file, graph.SourceLine{Line: header.n, Text: header.text}, gl)
	var ge *graph.TemplateError
	if errors.As(err, &ge) {
		return &ConfigError{ge.File, ge.Line, ge.Msg}
	}
	if err != nil {
		return err
	}
	if prev := pp.graphs[g.Name]; prev > 0 {
		return fmt.Errorf("profile %s: graph %s already defined on line %d", pp.cur.Name, g.Name, prev)
	}
	if _, replaces := pp.graphs[g.Name]; len(pp.cur.Graphs) >= maxProfileGraphs && !replaces {
		return fmt.Errorf("profile %s: more than %d graphs", pp.cur.Name, maxProfileGraphs)
	}
	pp.addGraph(g, header.n)
	return nil
}

// addGraph adds g to the current profile, declared on line n (0: copied
// by a use line), replacing a copied one of the same name.
func (pp *profileParser) addGraph(g *graph.Template, n int) {
	cur := pp.cur
	if k := slices.IndexFunc(cur.Graphs, func(o *graph.Template) bool { return o.Name == g.Name }); k >= 0 {
		cur.Graphs[k] = g
	} else {
		cur.Graphs = append(cur.Graphs, g)
	}
	pp.graphs[g.Name] = n
}

// checkGraphs reports a graph template of the current profile declared in
// this file that fits none of its keys: its data sources are neither the
// scalars' nor one table's columns.
func (pp *profileParser) checkGraphs() error {
	p := pp.cur
	if p == nil {
		return nil
	}
	sets := [][]string{DSNames(p.DS)}
	for _, t := range p.Tables {
		ds := make([]DS, len(t.Columns))
		for i, c := range t.Columns {
			ds[i] = c.DS
		}
		sets = append(sets, DSNames(ds))
	}
	for _, g := range p.Graphs {
		n := pp.graphs[g.Name]
		if n == 0 || slices.ContainsFunc(sets, g.Fits) {
			continue
		}
		return &ConfigError{pp.file, n, fmt.Sprintf("graph %s: no key of profile %s has its data sources %s (the scalars', or one table's columns)",
			g.Name, p.Name, strings.Join(g.DS(), ", "))}
	}
	return nil
}

// dsNames returns the names of ds.
func DSNames(ds []DS) []string {
	names := make([]string, len(ds))
	for i, d := range ds {
		names[i] = d.Name
	}
	return names
}
