package fleet

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"

	"github.com/spoold/spoold/rrd"
)

const secretWord = "s3cr3t-Community"

func TestParseTargets(t *testing.T) {
	custom := Profiles{"edge": {Name: "edge", DS: []DS{{OID: "1.3.6.1.2.1.1.3.0", DataSource: rrd.DataSource{Name: "x", Type: rrd.Gauge}}}}}
	for _, tc := range []struct {
		text  string
		check func(t *testing.T, ts []*Target)
	}{
		{"r1 192.0.2.1 profile=host community=public", func(t *testing.T, ts []*Target) {
			x := ts[0]
			if x.Name != "r1" || x.Host != "192.0.2.1" || x.Port != 161 || x.Profile.Name != "host" ||
				x.Version != gosnmp.Version2c || x.Community.Reveal() != "public" || x.Timeout != 0 || x.Retries != -1 || x.Line != 1 {
				t.Errorf("%+v", x)
			}
		}},
		{"# fleet\n\ndefaults version=1 community=c1 profile=if-mib:2 timeout=3s retries=2\n  a 10.0.0.1:1161\nb [::1]:162 community=c2 profile=edge", func(t *testing.T, ts []*Target) {
			a, b := ts[0], ts[1]
			if a.Port != 1161 || a.Version != gosnmp.Version1 || a.Timeout != 3*time.Second || a.Retries != 2 || len(a.Profile.DS) != 8 || a.Line != 4 {
				t.Errorf("a %+v", a)
			}
			if b.Host != "::1" || b.Port != 162 || b.Community.Reveal() != "c2" || b.Profile.Name != "edge" || b.Address() != "[::1]:162" {
				t.Errorf("b %+v", b)
			}
		}},
		{"v3 h.example version=3 user=u auth=sha auth-pass=12345678 priv=AES priv-pass=abcdefgh context=c profile=host", func(t *testing.T, ts []*Target) {
			v := ts[0].V3
			if ts[0].Version != gosnmp.Version3 || v.User != "u" || v.Auth != gosnmp.SHA || v.Priv != gosnmp.AES ||
				v.AuthPass.Reveal() != "12345678" || v.PrivPass.Reveal() != "abcdefgh" || v.Context != "c" {
				t.Errorf("%+v", v)
			}
		}},
		{"v3 ::1 version=3 user=u profile=host", func(t *testing.T, ts []*Target) {
			if ts[0].Host != "::1" || ts[0].V3.Auth != gosnmp.NoAuth || ts[0].V3.Priv != gosnmp.NoPriv {
				t.Errorf("%+v", ts[0])
			}
		}},
	} {
		t.Run(strings.SplitN(tc.text, "\n", 2)[0], func(t *testing.T) {
			ts, err := ParseTargets(strings.NewReader(tc.text), "t.targets", custom)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, ts)
		})
	}
}

func TestParseTargetsErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"r1", "t.targets:1: want"},
		{"r1 192.0.2.1 community=x", "t.targets:1: target r1: no profile"},
		{"\nr1 192.0.2.1 profile=nope community=x", "t.targets:2: target r1: profile \"nope\": no such profile"},
		{"r1 192.0.2.1:0 profile=host community=x", "port must be 1 to 65535"},
		{"r1 192.0.2.1:99999 profile=host community=x", "port must be 1 to 65535"},
		{"-r 192.0.2.1 profile=host community=x", "target name \"-r\""},
		{"r1 192.0.2.1 profile=host", "target r1: no community"},
		{"r1 192.0.2.1 profile=host community=x\nr1 192.0.2.2 profile=host community=x", "t.targets:2: target r1 already defined on line 1"},
		{"r1 192.0.2.1 profile=host community=x colour=red", "unknown key \"colour\""},
		{"r1 192.0.2.1 profile=host community=x community=y", "key community given twice"},
		{"r1 192.0.2.1 profile=host community=", "key community has an empty value"},
		{"r1 192.0.2.1 profile=host community=x timeout=fast", "timeout \"fast\""},
		{"r1 192.0.2.1 profile=host community=x retries=99", "retries \"99\""},
		{"r1 192.0.2.1 profile=host community=x version=4", "version \"4\""},
		{"r1 192.0.2.1 profile=host community=x user=u", "user is for version 3 only"},
		{"r1 192.0.2.1 profile=host version=3", "version 3 needs user="},
		{"r1 192.0.2.1 profile=host version=3 user=u auth=SHA", "auth= needs auth-pass="},
		{"r1 192.0.2.1 profile=host version=3 user=u auth=SHA1 auth-pass=12345678", "auth \"SHA1\""},
		{"r1 192.0.2.1 profile=host version=3 user=u auth=SHA auth-pass=short", "auth-pass: shorter than 8"},
		{"r1 192.0.2.1 profile=host version=3 user=u priv=AES priv-pass=12345678", "priv= needs auth="},
		{"r1 192.0.2.1 profile=host version=3 user=u community=x", "community is for versions 1 and 2c"},
		{"r1 192.0.2.1 profile=if-mib:0 community=x", "profile \"if-mib:0\""},
		{"defaults profile", "t.targets:1: option 1 is not key=value"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			_, err := ParseTargets(strings.NewReader(tc.text), "t.targets", nil)
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a ConfigError with %q", err, tc.want)
			}
		})
	}
}

// A secret appears in no error and in no formatting of a target.
func TestSecretsAreNeverPrinted(t *testing.T) {
	lines := []string{
		"r1 192.0.2.1 profile=host " + secretWord,                          // a secret that lost its key
		"r1 192.0.2.1 profile=host community=" + secretWord + " version=3", // community with v3
		"r1 192.0.2.1 profile=nope community=" + secretWord,
		"r1 192.0.2.1 profile=host version=3 user=u auth=MD5 auth-pass=" + secretWord + " priv-pass=" + secretWord,
		"r1 192.0.2.1 profile=host community=file:/nonexistent/" + secretWord[:2],
	}
	for _, l := range lines {
		_, err := ParseTargets(strings.NewReader(l), "t", nil)
		if err == nil || strings.Contains(err.Error(), secretWord) {
			t.Errorf("line %q: error %v", l, err)
		}
	}
	ts, err := ParseTargets(strings.NewReader("r1 192.0.2.1 profile=host version=3 user=u auth=SHA auth-pass="+secretWord+" priv=AES priv-pass="+secretWord+
		"\nr2 192.0.2.2 profile=host community="+secretWord), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ts {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
			if s := fmt.Sprintf(verb, x) + fmt.Sprintf(verb, *x) + fmt.Sprintf(verb, x.V3); strings.Contains(s, secretWord) {
				t.Errorf("%s of a target prints its secret: %s", verb, s)
			}
		}
	}
}

func TestSecretFromFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "community")
	if err := os.WriteFile(path, []byte(secretWord+"\nignored\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts, err := ParseTargets(strings.NewReader("r1 192.0.2.1 profile=host community=file:"+path), "t", nil)
	if err != nil || ts[0].Community.Reveal() != secretWord {
		t.Fatalf("%v %v", ts, err)
	}
}

func TestParseProfiles(t *testing.T) {
	text := `# custom profiles
profile edge
  use if-mib:2
  ds load1 .1.3.6.1.4.1.2021.10.1.5.1 gauge 0 U
  ds temp  1.3.6.1.4.1.9.9.13.1.3.1.3.1 GAUGE -40 125
profile core
  use edge
  ds errs 1.3.6.1.2.1.2.2.1.14.1 DERIVE 0
`
	ps, err := ParseProfiles(strings.NewReader(text), "p.profiles")
	if err != nil {
		t.Fatal(err)
	}
	edge, core := ps["edge"], ps["core"]
	if len(edge.DS) != 10 || len(core.DS) != 11 {
		t.Fatalf("edge %d core %d data sources", len(edge.DS), len(core.DS))
	}
	if d := edge.DS[8]; d.Name != "load1" || d.OID != "1.3.6.1.4.1.2021.10.1.5.1" || d.Type != rrd.Gauge || d.Min != 0 || !math.IsNaN(d.Max) {
		t.Errorf("load1 %+v", d)
	}
	if d := edge.DS[9]; d.Min != -40 || d.Max != 125 {
		t.Errorf("temp %+v", d)
	}
	if d := core.DS[10]; d.Type != rrd.Derive || d.Min != 0 || !math.IsNaN(d.Max) {
		t.Errorf("errs %+v", d)
	}
	if got := ps.Names(); strings.Join(got, ",") != "core,edge" {
		t.Errorf("names %v", got)
	}
}

// A profile's rra lines are the archives of the files its keys create,
// its tables' rows included, and a profile using it inherits them; a
// profile without any creates the daemon's default archives.
func TestProfileRRAs(t *testing.T) {
	text := `profile small
  use if-mib
  rra RRA:AVERAGE:0.5:1:120
  rra RRA:MAX:0.5:10:48
profile smaller
  use small
profile plain
  use if-mib
`
	ps, err := ParseProfiles(strings.NewReader(text), "p")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"RRA:AVERAGE:0.5:1:120", "RRA:MAX:0.5:10:48"}
	for _, name := range []string{"small", "smaller"} {
		tg := &Target{Name: "r1", Profile: ps[name]}
		l, ok := tg.RRDLayout("r1/eth0", 30*time.Second)
		if !ok || !slices.Equal(l.RRAs, want) || len(l.DS) != 10 {
			t.Errorf("%s: layout of a row %v %+v, want RRAs %v and 10 data sources", name, ok, l, want)
		}
	}
	tg := &Target{Name: "r1", Profile: ps["plain"]}
	if l, _ := tg.RRDLayout("r1/eth0", 30*time.Second); !slices.Equal(l.RRAs, rrd.DefaultRRAs(30*time.Second)) {
		t.Errorf("plain: RRAs %v, want the defaults", l.RRAs)
	}
}

func TestParseProfilesErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"ds a 1.3.6 GAUGE", "p:1: \"ds\" before the first \"profile\" line"},
		{"profile p\nds a 1.3.6 GAUGE\nds a 1.3.7 GAUGE", "p:3: profile p: data source a already defined on line 2"},
		{"profile p\nds a 1.3.6 GAUGE\nds b .1.3.6 GAUGE", "p:3: profile p: OID 1.3.6 already polled on line 2"},
		{"profile p\nds this_name_is_far_too_long 1.3.6 GAUGE", "data source name"},
		{"profile p\nds a-b 1.3.6 GAUGE", "data source name \"a-b\""},
		{"profile p\nds a 1.3.x GAUGE", "bad arc \"x\""},
		{"profile p\nds a 3.1 GAUGE", "first arc"},
		{"profile p\nds a 1.3.6 RATE", "type \"RATE\""},
		{"profile p\nds a 1.3.6 GAUGE 10 5", "min 10 not below max 5"},
		{"profile p\nds a 1.3.6 GAUGE x", "min \"x\""},
		{"profile p\nds a 1.3.6 GAUGE 0 Inf", "max \"Inf\""},
		{"profile p\nds a 1.3.6", "want \"ds"},
		{"profile p\nprofile q\nds a 1.3.6 GAUGE", "p:1: profile p has no data sources"},
		{"profile p", "p:1: profile p has no data sources"},
		{"profile host\nds a 1.3.6 GAUGE", "reserved"},
		{"profile p\nds a 1.3.6 GAUGE\nprofile p\nds a 1.3.6 GAUGE", "p:3: profile p already defined on line 1"},
		{"profile p\nuse q", "use \"q\""},
		{"profile p\nuse p", "use \"p\""},
		{"profile p\nfoo", "unknown keyword \"foo\""},
		{"profile p\nds a 1.3.6 GAUGE\nrra RRA:AVERAGE:0.5:1", "p:3: check RRA"},
		{"profile p\nds a 1.3.6 GAUGE\nrra RRA:HWPREDICT:0.5:1:10", "consolidation function \"HWPREDICT\""},
		{"profile p\nds a 1.3.6 GAUGE\nrra RRA:MAX:1:1:10", "xff \"1\""},
		{"profile p\nds a 1.3.6 GAUGE\nrra RRA:MAX:0.5:1:0", "rows \"0\""},
		{"profile p\nds a 1.3.6 GAUGE\nrra", "want \"rra"},
		{"profile p q", "want \"profile <name>\""},
		{"profile p\nds a 1.3.6 GAUGE\n" + strings.Repeat("x", maxLineLen+1), "p:3: line longer than"},
	} {
		t.Run(strings.ReplaceAll(tc.text[:min(len(tc.text), 60)], "\n", "|"), func(t *testing.T) {
			_, err := ParseProfiles(strings.NewReader(tc.text), "p")
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a ConfigError with %q", err, tc.want)
			}
		})
	}
}

func TestBuiltinProfiles(t *testing.T) {
	p, err := IfMIBProfile(3)
	if err != nil || len(p.DS) != 12 || p.DS[5].Name != "out2" || p.DS[5].OID != "1.3.6.1.2.1.31.1.1.1.10.2" || p.DS[5].Type != rrd.Counter {
		t.Fatalf("%+v %v", p, err)
	}
	for _, name := range []string{"host", "if-mib:1", "if-mib:1000"} {
		p, err := Profiles(nil).Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, d := range p.DS {
			if !rrd.ValidDSName(d.Name) || seen[d.Name] || seen[d.OID] {
				t.Errorf("%s: bad or repeated data source %+v", name, d)
			}
			if _, err := normalizeOID(d.OID); err != nil {
				t.Error(err)
			}
			seen[d.Name], seen[d.OID] = true, true
		}
	}
	for _, bad := range []string{"if-mib:1001", "if-mib:x", "if-mib:", "hosts"} {
		if _, err := Profiles(nil).Lookup(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func FuzzParseTargets(f *testing.F) {
	for _, s := range []string{
		"r1 192.0.2.1 profile=host community=public",
		"defaults version=3 user=u auth=SHA auth-pass=12345678 priv=AES priv-pass=12345678 profile=if-mib:2\nr [::1]:1 timeout=1s retries=0",
		"# c\n\n a b:c d=e",
		"r1 h community=file:x profile=host",
	} {
		f.Add(s)
	}
	addExample(f, "targets.conf")
	noFiles := func(string) ([]byte, error) { return nil, errors.New("no files in fuzzing") }
	f.Fuzz(func(t *testing.T, text string) {
		ts, err := parseTargets(strings.NewReader(text), "f", nil, noFiles)
		if err != nil {
			var ce *ConfigError
			if errors.As(err, &ce) && (ce.Line < 1 || ce.File != "f") {
				t.Fatalf("bad position in %v", err)
			}
			return
		}
		names := map[string]bool{}
		for _, x := range ts {
			if !validName(x.Name) || names[x.Name] || x.Profile == nil || x.Port == 0 || x.Host == "" {
				t.Fatalf("bad target %+v", x)
			}
			if (x.Version == gosnmp.Version3) != (x.V3 != nil) {
				t.Fatalf("version %v with V3 %v", x.Version, x.V3)
			}
			names[x.Name] = true
		}
	})
}

func FuzzParseProfiles(f *testing.F) {
	for _, s := range []string{
		"profile p\nuse if-mib:2\nds a 1.3.6.1 GAUGE 0 U",
		"profile p\nds a .1.3.6 COUNTER 0 100\nprofile q\nuse p",
		tablesText,
		"profile p\ntable t\nindex 1.3\ncolumn a 1.3.1|1.3.2 GAUGE\ntable u\nsubdir u\nindex 1.3\nfilter instance =~ ^x\ncolumn a 1.3.1 GAUGE\nprofile q\nuse p\nuse if-mib",
		"profile p\nuse if-mib\ngraph traffic\ndef in in\nline in 00FF00 \"in\"\ngraph g\ndef o out\ncdef b o,8,*\narea b 0000FF\nprofile q\nuse p\ngraph g\ndef i in\nline i 000000",
	} {
		f.Add(s)
	}
	addExample(f, "profiles.conf")
	f.Fuzz(func(t *testing.T, text string) {
		ps, err := ParseProfiles(strings.NewReader(text), "f")
		if err != nil {
			return
		}
		for name, p := range ps {
			if name != p.Name || !validName(name) || len(p.DS) == 0 && len(p.Tables) == 0 || len(p.DS) > maxProfileDS {
				t.Fatalf("bad profile %q: %d data sources", name, len(p.DS))
			}
			checkTables(t, p)
			// Every graph template fits a key of its profile (a copied one
			// fit the profile it came from, whose keys this one has too).
			for _, g := range p.Graphs {
				fits := g.Fits(DSNames(p.DS))
				for _, tb := range p.Tables {
					ds, _ := (&Target{Name: "t", Profile: p}).KeyDS(RowKey("t", tb.keyRest("x")))
					fits = fits || g.Fits(DSNames(ds))
				}
				if !fits || len(p.Graphs) > maxProfileGraphs {
					t.Fatalf("profile %s: graph %s fits no key, or more than %d graphs", name, g.Name, maxProfileGraphs)
				}
			}
			for _, d := range p.DS {
				if !rrd.ValidDSName(d.Name) || d.Min >= d.Max {
					t.Fatalf("bad data source %+v", d)
				}
				if _, err := normalizeOID(d.OID); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

func TestDefaultsOfTheOtherVersionAreNotInherited(t *testing.T) {
	in := "defaults version=2c community=public profile=host\n" +
		"a 127.0.0.1\n" +
		"b 127.0.0.1 version=3 user=spoold auth=SHA auth-pass=12345678\n" +
		"defaults user=ops\n" +
		"c 127.0.0.1\n"
	ts, err := ParseTargets(strings.NewReader(in), "t.conf", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ts[0].Community.Reveal() != "public" || ts[1].V3 == nil || ts[1].Community != "" || ts[2].V3 != nil {
		t.Fatalf("targets = %v", ts)
	}
	// Written on the target line itself, the wrong version's option is an error.
	if _, err := ParseTargets(strings.NewReader("x 127.0.0.1 profile=host version=3 user=u community=c\n"), "t.conf", nil); err == nil {
		t.Fatal("community on a v3 target line accepted")
	}
}

// addExample seeds a fuzz target with the shipped example file, the real
// input operators copy.
func addExample(f *testing.F, name string) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "examples", name))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
}

// TestTargetNamesCannotEscapeTheRRDDirectory: a target name becomes an RRD
// file name; one that could leave the RRD directory (or hide in it) is
// refused at load time, naming the file and line.
func TestTargetNamesCannotEscapeTheRRDDirectory(t *testing.T) {
	for _, name := range []string{
		"..", "../etc/passwd", "a/../../b", "/etc/passwd", ".hidden", "a/b", `a\b`, "-rf", "_x",
		"%2e%2e", "a%2Fb", "a\x00b", "a\tb", "é", strings.Repeat("a", 256),
	} {
		t.Run(fmt.Sprintf("%q", name), func(t *testing.T) {
			text := "# targets\n\n" + name + " 127.0.0.1 profile=host community=c\n"
			_, err := ParseTargets(strings.NewReader(text), "/etc/spoold/targets.conf", nil)
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.File != "/etc/spoold/targets.conf" || ce.Line != 3 {
				t.Fatalf("ParseTargets accepted or misplaced the name: %v", err)
			}
			if !strings.HasPrefix(err.Error(), "/etc/spoold/targets.conf:3: ") {
				t.Fatalf("error %q does not start with file:line", err)
			}
		})
	}
}

// TestMisplacedSecretIsNeverPrinted puts a secret key=value where the
// target's name or address belongs: the line is refused, by position, and
// the error does not show the secret.
func TestMisplacedSecretIsNeverPrinted(t *testing.T) {
	for _, l := range []string{
		"community=" + secretWord + " 192.0.2.1 profile=host",
		"auth-pass=" + secretWord + " 192.0.2.1 profile=host",
		"r1 community=" + secretWord + " profile=host",
		"r1 priv-pass=" + secretWord + " profile=host community=x",
		"defaults profile=host community=x\nr1 community=" + secretWord,
	} {
		t.Run(strings.ReplaceAll(strings.ReplaceAll(l, secretWord, "SECRET"), "\n", "|"), func(t *testing.T) {
			_, err := ParseTargets(strings.NewReader(l), "t", nil)
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), secretWord) {
				t.Fatalf("error shows the secret: %v", err)
			}
		})
	}
}
