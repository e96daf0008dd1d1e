package fleet

import (
	"errors"
	"strings"
	"testing"

	"github.com/gosnmp/gosnmp"

	"github.com/spoold/spoold/mib"
	"github.com/spoold/spoold/rrd"
)

const tablesText = `profile sw
  ds uptime 1.3.6.1.2.1.1.3.0 GAUGE 0 U
  table if
    index    1.3.6.1.2.1.2.2.1.1
    instance ifName|ifDescr
    filter   1.3.6.1.2.1.2.2.1.3 != 24
    filter   instance !~ ^(lo|Null)
    column in  1.3.6.1.2.1.31.1.1.1.6|1.3.6.1.2.1.2.2.1.10 COUNTER 0 U
    column out 1.3.6.1.2.1.31.1.1.1.10 COUNTER
  table disk
    subdir disk
    instance index
    column used 1.3.6.1.2.1.25.2.3.1.6 GAUGE 0
`

func TestParseTables(t *testing.T) {
	ps, err := ParseProfiles(strings.NewReader(tablesText), "p.conf")
	if err != nil {
		t.Fatal(err)
	}
	p := ps["sw"]
	if len(p.DS) != 1 || len(p.Tables) != 2 {
		t.Fatalf("%d scalars, %d tables", len(p.DS), len(p.Tables))
	}
	it, disk := p.Tables[0], p.Tables[1]
	if it.Index != "1.3.6.1.2.1.2.2.1.1" || it.Subdir != "" || len(it.Instance) != 2 || it.Instance[0] != "1.3.6.1.2.1.31.1.1.1.1" || it.Instance[1] != "1.3.6.1.2.1.2.2.1.2" {
		t.Errorf("if table %+v", it)
	}
	if in := it.Columns[0]; in.Name != "in" || in.OID != "1.3.6.1.2.1.31.1.1.1.6" || len(in.Alternatives) != 2 || in.Alternatives[1] != "1.3.6.1.2.1.2.2.1.10" || in.Type != rrd.Counter {
		t.Errorf("column in %+v", in)
	}
	// A table without an index line finds its rows from its other columns.
	if disk.Subdir != "disk" || disk.Index != "" || disk.Instance != nil || disk.InstanceText != "index" {
		t.Errorf("disk table %+v", disk)
	}
	// The keys of each table find the table back (rrdwriter's Options.Layout(key)).
	tg := &Target{Name: "sw1", Profile: p}
	for key, want := range map[string][]string{
		"sw1": {"uptime"}, "sw1/Gi0_2F1": {"in", "out"}, "sw1/disk/_2Fhome": {"used"},
	} {
		ds, ok := tg.KeyDS(key)
		if !ok || len(ds) != len(want) || ds[0].Name != want[0] {
			t.Errorf("KeyDS(%q) = %v, %v; want %v", key, ds, ok, want)
		}
	}
	for _, key := range []string{"sw2/x", "sw2", "sw1x/y"} {
		if ds, ok := tg.KeyDS(key); ok {
			t.Errorf("KeyDS(%q) = %v: not the target's key", key, ds)
		}
	}
}

func TestParseTablesErrors(t *testing.T) {
	for _, tc := range []struct {
		text, want string
		line       int
	}{
		{"profile p\ncolumn a 1.3 GAUGE", "outside a table", 2},
		{"profile p\ntable t\nindex 1.3\nprofile q\nds a 1.3 GAUGE", "no \"column\" lines", 2},
		{"profile p\ntable t\nindex 1.3\ncolumn a 1.3.1 GAUGE\ntable u\nindex 1.4\ncolumn a 1.4.1 GAUGE", "give one a \"subdir\" line", 5},
		{"profile p\ntable t\nindex 1.3\ncolumn a 1.3.1 GAUGE\ncolumn a 1.3.2 GAUGE", "data source a already defined on line 4", 5},
		{"profile p\ntable t\nindex 1.3\ncolumn a 1.3.1|x GAUGE", "alternative", 4},
		{"profile p\ntable t\nindex 1.3\ninstance ifFoo\ncolumn a 1.3.1 GAUGE", "instance: want index", 4},
		{"profile p\ntable t\nindex ifIndex\nfilter ifOperStatus == sideways\ncolumn a 1.3.1 GAUGE", "not one of its labels", 4},
		{"profile p\nds a ifHCInOctetz.1 COUNTER", "ifHCInOctetz", 2},
		{"profile p\ntable t\nindex 1.3\nfilter instance =~ (\ncolumn a 1.3.1 GAUGE", "filter", 4},
		{"profile p\ntable t\nindex 1.3\nfilter instance < 3\ncolumn a 1.3.1 GAUGE", "operator", 4},
		{"profile p\ntable t/x\nindex 1.3", "table name", 2},
		{"profile p\ntable t\nsubdir ..\nindex 1.3", "subdir", 3},
		{"profile p\ntable t\nindex 1.3\ncolumn a 1.3.1 GAUGE\ntable t\nsubdir s\nindex 1.3\ncolumn a 1.3.1 GAUGE", "table t already defined on line 2", 5},
		{"profile p\nuse if-mib\ntable u\nindex 1.3\ncolumn a 1.3.1 GAUGE", "give one a \"subdir\" line", 3},
	} {
		t.Run(strings.ReplaceAll(tc.text, "\n", ";"), func(t *testing.T) {
			_, err := ParseProfiles(strings.NewReader(tc.text), "p.conf")
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.File != "p.conf" || ce.Line != tc.line || !strings.Contains(ce.Msg, tc.want) {
				t.Fatalf("got %v, want p.conf:%d: ...%s...", err, tc.line, tc.want)
			}
			if strings.Count(err.Error(), "p.conf") != 1 {
				t.Fatalf("file named more than once: %v", err)
			}
		})
	}
}

func TestBuiltinTableProfiles(t *testing.T) {
	ifm, err := Profiles(nil).Lookup("if-mib")
	if err != nil {
		t.Fatal(err)
	}
	if len(ifm.Tables) != 1 || len(ifm.Tables[0].Columns) != 10 || len(ifm.DS) != 0 {
		t.Fatalf("if-mib: %+v", ifm)
	}
	host := HostProfile()
	if len(host.DS) != 13 || host.DS[0].Name != "uptime" || len(host.Tables) != 2 {
		t.Fatalf("host: %d scalars, %d tables", len(host.DS), len(host.Tables))
	}
	if _, err := ParseProfiles(strings.NewReader("profile if-mib\nds a 1.3 GAUGE"), "p"); err == nil {
		t.Fatal("a profiles file redefines if-mib")
	}
}

func TestFilterPass(t *testing.T) {
	num := func(n int) *gosnmp.SnmpPDU { return &gosnmp.SnmpPDU{Type: gosnmp.Integer, Value: n} }
	str := func(s string) *gosnmp.SnmpPDU { return &gosnmp.SnmpPDU{Type: gosnmp.OctetString, Value: []byte(s)} }
	for _, tc := range []struct {
		filter string
		v      *gosnmp.SnmpPDU
		pass   bool
	}{
		{"1.3 == 6", num(6), true}, {"1.3 == 6", num(24), false},
		{"1.3 != 24", num(6), true}, {"1.3 != 24", num(24), false},
		{"1.3 != 24", nil, false},
		{"1.3 != 24", &gosnmp.SnmpPDU{Type: gosnmp.NoSuchInstance}, false},
		{"instance =~ ^Gi", str("Gi0/1"), true}, {"instance !~ ^Gi", str("Gi0/1"), false},
		{"instance == lo", str("lo"), true}, {"instance != lo", str("eth0"), true},
		{"1.3 =~ ^[12]$", num(2), true},
		{"ifOperStatus == up", num(1), true}, {"ifOperStatus == up", num(2), false},
		{"IF-MIB::ifType != softwareLoopback", num(24), false}, {"ifType != softwareLoopback", num(6), true},
	} {
		f, err := parseFilter(strings.Fields(tc.filter), mib.Builtin().Resolve, mib.Builtin())
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Pass(tc.v); got != tc.pass {
			t.Errorf("%s on %v: %v, want %v", tc.filter, tc.v, got, tc.pass)
		}
	}
}

// checkTables checks what ParseProfiles promises of every table it
// returns.
func checkTables(t *testing.T, p *Profile) {
	t.Helper()
	subdirs := map[string]bool{}
	for _, tb := range p.Tables {
		if len(tb.Columns) == 0 || subdirs[tb.Subdir] || strings.Contains(tb.Subdir, "/") {
			t.Fatalf("bad table %+v", tb)
		}
		subdirs[tb.Subdir] = true
		// A row key of this table finds this table back (the writer's
		// Options.Layout(key)), whatever the instance name.
		for _, name := range []string{"x", "Gi0/1", ".."} {
			key := RowKey("t", tb.keyRest(InstanceSegment(name)))
			if _, rest := SplitKey(key); rest == "" {
				t.Fatalf("row key %q has no row part", key)
			} else if got, ok := p.TableOf(rest); !ok || got != tb {
				t.Fatalf("row key %q of table %s finds table %v", key, tb.Name, got)
			}
		}
		for _, c := range tb.Columns {
			if c.OID != c.Alternatives[0] || !rrd.ValidDSName(c.Name) {
				t.Fatalf("bad column %+v", c)
			}
		}
	}
}
