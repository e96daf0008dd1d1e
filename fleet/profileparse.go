package fleet

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spoold/spoold/mib"
	"github.com/spoold/spoold/rrd"
)

// ParseProfiles parses a profiles file (docs/profiles.md); file names
// it in errors, which are *ConfigError for problems in the text.
//
//	profile <name>
//	use <profile>                        # copy the scalars and tables of a built-in or earlier profile
//	ds <ds-name> <oid> <TYPE> [min [max]] # a scalar: min, max a number or U
//	rra RRA:<CF>:<xff>:<steps>:<rows>    # an archive of the profile's new files (default: the daemon's)
//	table <name>                         # a table: the lines below, up to the next table or profile line
//	  subdir <name>                      # rows under <target>/<name>/ (default: <target>/)
//	  index <column-oid>                 # one more column walked to find the rows (optional)
//	  instance <index|ifName|ifDescr|ifAlias|column-oid>[|...]
//	  alias <column-oid>                 # each row's description, walked at discovery (the device page shows it)
//	  filter <column-oid|instance> <==|!=|=~|!~> <value>
//	  column <ds-name> <column-oid>[|<alternative>...] <TYPE> [min [max]]
//	graph <name>                         # a graph template: graph.ParseTemplate's lines below it
//
// OIDs may be numeric or MIB names (IF-MIB::ifHCInOctets, ifHCInOctets,
// sysUpTime.0) of the built-in objects of package mib.
func ParseProfiles(r io.Reader, file string) (Profiles, error) {
	return ParseProfilesMIB(r, file, mib.Builtin())
}

// ParseProfilesMIB is ParseProfiles with the MIB names of res (mib.Load:
// the built-in objects and an operator's --mib-dir).
func ParseProfilesMIB(r io.Reader, file string, res *mib.Resolver) (Profiles, error) {
	pp := &profileParser{file: file, ps: Profiles{}, where: map[string]int{}, res: res}
	return pp.parse(r)
}

func (pp *profileParser) parse(r io.Reader) (Profiles, error) {
	file := pp.file
	lines, err := readConfigLines(r, file)
	if err != nil {
		return nil, err
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		var err error
		if l.fields[0] == "graph" {
			n := graphBlockLen(lines[i+1:])
			err = pp.graph(l, lines[i+1:i+1+n])
			i += n
		} else {
			err = pp.line(l)
		}
		if err != nil {
			var ce *ConfigError
			if errors.As(err, &ce) {
				return nil, err
			}
			return nil, &ConfigError{file, l.n, err.Error()}
		}
	}
	if err := pp.finish(); err != nil {
		return nil, err
	}
	return pp.ps, nil
}

// maxProfileDS bounds a profile's scalar data sources (an entry's values).
const maxProfileDS = 4000

// profileParser is the state of ParseProfiles between lines.
type profileParser struct {
	file    string
	builtin bool // parsing the built-in profiles: their names are allowed
	res     *mib.Resolver
	ps      Profiles
	where   map[string]int // profile name: its line
	cur     *Profile
	seenDS  map[string]int // scalar DS names and OIDs of cur: their lines
	seenOID map[string]int
	tab     *Table         // the table being declared: until the next table, use or profile line
	tabDS   map[string]int // its DS names: their lines
	graphs  map[string]int // graph templates of cur: their lines (0: copied by a use line)
}

func (pp *profileParser) line(l configLine) error {
	kw, args := l.fields[0], l.fields[1:]
	if kw == "profile" {
		return pp.profile(l.n, args)
	}
	if pp.cur == nil {
		return fmt.Errorf("%q before the first \"profile\" line", kw)
	}
	switch kw {
	case "use":
		return pp.use(l.n, args)
	case "ds":
		d, err := parseDS(args, pp.oid)
		if err != nil {
			return err
		}
		return pp.addScalar(l.n, d)
	case "table":
		return pp.table(l.n, args)
	case "rra":
		return pp.rra(args)
	case "subdir", "index", "instance", "alias", "filter", "column":
		if pp.tab == nil {
			return fmt.Errorf("%q outside a table (write \"table <name>\" first)", kw)
		}
		return pp.tableLine(l.n, kw, args)
	}
	return fmt.Errorf("unknown keyword %q: want profile, use, ds, rra, table, subdir, index, instance, alias, filter or column", printable(kw))
}

func (pp *profileParser) profile(n int, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("want \"profile <name>\"")
	}
	name := args[0]
	if !validName(name) {
		return fmt.Errorf("profile name %q: want 1 to 255 of [A-Za-z0-9._-], starting with a letter or digit", printable(name))
	}
	if reserved := name == "host" || strings.HasPrefix(name, "if-mib"); reserved && !pp.builtin {
		return fmt.Errorf("profile name %q is reserved for a built-in profile", name)
	}
	if prev, dup := pp.where[name]; dup {
		return fmt.Errorf("profile %s already defined on line %d", name, prev)
	}
	if err := pp.finish(); err != nil {
		return err
	}
	pp.cur = &Profile{Name: name}
	pp.ps[name], pp.where[name] = pp.cur, n
	pp.seenDS, pp.seenOID, pp.graphs = map[string]int{}, map[string]int{}, map[string]int{}
	pp.tab = nil
	return nil
}

func (pp *profileParser) use(n int, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("want \"use <profile>\"")
	}
	src, err := pp.ps.Lookup(args[0])
	if err != nil || src == pp.cur {
		return fmt.Errorf("use %q: no such built-in or earlier profile", printable(args[0]))
	}
	if err := pp.checkTable(); err != nil {
		return err
	}
	for _, d := range src.DS {
		if err := pp.addScalar(n, d); err != nil {
			return err
		}
	}
	for _, t := range src.Tables {
		if err := pp.addTable(t); err != nil {
			return err
		}
	}
	for _, g := range src.Graphs {
		pp.addGraph(g, 0)
	}
	if pp.cur.RRAs == nil {
		pp.cur.RRAs = src.RRAs
	}
	return nil
}

// rra adds an archive to the files of the current profile's keys. Like
// "use", it ends a table being declared.
func (pp *profileParser) rra(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("want \"rra RRA:<CF>:<xff>:<steps>:<rows>\"")
	}
	if err := pp.checkTable(); err != nil {
		return err
	}
	if err := rrd.CheckRRA(args[0]); err != nil {
		return err
	}
	if len(pp.cur.RRAs) >= maxRRAs {
		return fmt.Errorf("profile %s: more than %d rra lines", pp.cur.Name, maxRRAs)
	}
	pp.cur.RRAs = append(slices.Clip(pp.cur.RRAs), args[0])
	return nil
}

// maxRRAs bounds a profile's archives.
const maxRRAs = 64

func (pp *profileParser) addScalar(n int, d DS) error {
	cur := pp.cur
	if prev, dup := pp.seenDS[d.Name]; dup {
		return fmt.Errorf("profile %s: data source %s already defined on line %d", cur.Name, d.Name, prev)
	}
	if prev, dup := pp.seenOID[d.OID]; dup {
		return fmt.Errorf("profile %s: OID %s already polled on line %d", cur.Name, d.OID, prev)
	}
	if len(cur.DS) >= maxProfileDS {
		return fmt.Errorf("profile %s: more than %d data sources", cur.Name, maxProfileDS)
	}
	pp.seenDS[d.Name], pp.seenOID[d.OID] = n, n
	cur.DS = append(cur.DS, d)
	return nil
}

func (pp *profileParser) table(n int, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("want \"table <name>\"")
	}
	if !validTableName(args[0]) {
		return fmt.Errorf("table name %q: want 1 to %d of [A-Za-z0-9_-]", printable(args[0]), maxTableNameLen)
	}
	if err := pp.checkTable(); err != nil {
		return err
	}
	t := &Table{Name: args[0], Line: n}
	pp.tab, pp.tabDS = t, map[string]int{} // before addTable: its subdir is not known yet
	return pp.addTable(t)
}

// addTable adds t to the current profile; its subdir is checked when the
// table is complete (checkTable).
func (pp *profileParser) addTable(t *Table) error {
	cur := pp.cur
	if len(cur.Tables) >= maxTables {
		return fmt.Errorf("profile %s: more than %d tables", cur.Name, maxTables)
	}
	for _, o := range cur.Tables {
		if o.Name == t.Name {
			return fmt.Errorf("profile %s: table %s already defined on line %d", cur.Name, t.Name, o.Line)
		}
	}
	cur.Tables = append(cur.Tables, t)
	return pp.checkSubdirs()
}

// checkSubdirs reports two complete tables of the current profile whose
// rows would share keys.
func (pp *profileParser) checkSubdirs() error {
	ts := pp.cur.Tables
	for i, a := range ts {
		for _, b := range ts[:i] {
			if a != pp.tab && b != pp.tab && a.Subdir == b.Subdir {
				return fmt.Errorf("profile %s: tables %s and %s both keep their rows in %q: give one a \"subdir\" line",
					pp.cur.Name, b.Name, a.Name, "<target>/"+a.Subdir)
			}
		}
	}
	return nil
}

func (pp *profileParser) tableLine(n int, kw string, args []string) error {
	t := pp.tab
	switch kw {
	case "subdir":
		if len(args) != 1 || !validTableName(args[0]) {
			return fmt.Errorf("want \"subdir <name>\", a name of 1 to %d of [A-Za-z0-9_-]", maxTableNameLen)
		}
		t.Subdir = args[0]
	case "index", "alias":
		if len(args) != 1 {
			return fmt.Errorf("want \"%s <column-oid>\"", kw)
		}
		oid, err := pp.oid(args[0])
		if err != nil {
			return fmt.Errorf("%s: %w", kw, err)
		}
		if kw == "index" {
			t.Index = oid
		} else {
			t.Alias = oid
		}
	case "instance":
		if len(args) != 1 {
			return fmt.Errorf("want \"instance <index|ifName|ifDescr|ifAlias|column-oid>[|...]\"")
		}
		cols, err := parseInstance(args[0], pp.oid)
		if err != nil {
			return err
		}
		t.Instance, t.InstanceText = cols, args[0]
	case "filter":
		if len(t.Filters) >= maxTableFilters {
			return fmt.Errorf("table %s: more than %d filters", t.Name, maxTableFilters)
		}
		f, err := parseFilter(args, pp.oid, pp.res)
		if err != nil {
			return err
		}
		t.Filters = append(t.Filters, f)
	case "column":
		return pp.column(n, args)
	}
	return nil
}

func (pp *profileParser) column(n int, args []string) error {
	t := pp.tab
	if len(args) < 2 {
		return fmt.Errorf("want \"column <ds-name> <column-oid>[|<alternative>...] <TYPE> [min [max]]\"")
	}
	alts := strings.Split(args[1], "|")
	if len(alts) > maxColumnAlts {
		return fmt.Errorf("column %s: more than %d alternatives", printable(args[0]), maxColumnAlts)
	}
	f := append([]string{args[0], alts[0]}, args[2:]...)
	d, err := parseDS(f, pp.oid)
	if err != nil {
		return fmt.Errorf("column: %w", err)
	}
	c := Column{DS: d, Alternatives: []string{d.OID}}
	for _, a := range alts[1:] {
		oid, err := pp.oid(a)
		if err != nil {
			return fmt.Errorf("column %s: alternative: %w", d.Name, err)
		}
		c.Alternatives = append(c.Alternatives, oid)
	}
	if prev, dup := pp.tabDS[d.Name]; dup {
		return fmt.Errorf("table %s: data source %s already defined on line %d", t.Name, d.Name, prev)
	}
	if len(t.Columns) >= maxTableColumns {
		return fmt.Errorf("table %s: more than %d columns", t.Name, maxTableColumns)
	}
	pp.tabDS[d.Name] = n
	t.Columns = append(t.Columns, c)
	return nil
}

// checkTable reports what the table being declared lacks, at its end.
func (pp *profileParser) checkTable() error {
	t := pp.tab
	if t == nil {
		return nil
	}
	pp.tab = nil
	if len(t.Columns) == 0 {
		return &ConfigError{pp.file, t.Line, fmt.Sprintf("table %s has no \"column\" lines", t.Name)}
	}
	if err := pp.checkSubdirs(); err != nil {
		return &ConfigError{pp.file, t.Line, err.Error()}
	}
	return nil
}

// oid resolves an OID as a profile writes it: numeric (checked by
// normalizeOID, whose errors say what is wrong with the arcs) or a MIB name.
func (pp *profileParser) oid(s string) (string, error) {
	if s != "" && (s[0] == '.' || s[0] >= '0' && s[0] <= '9') {
		return normalizeOID(s)
	}
	return pp.res.Resolve(s)
}

// finish checks the current profile at its end.
func (pp *profileParser) finish() error {
	if err := pp.checkTable(); err != nil {
		return err
	}
	if p := pp.cur; p != nil && len(p.DS) == 0 && len(p.Tables) == 0 {
		return &ConfigError{pp.file, pp.where[p.Name], fmt.Sprintf("profile %s has no data sources", p.Name)}
	}
	return pp.checkGraphs()
}
