package mib

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/internal/testing/testenv"
)

// vendorModules writes n generated vendor modules into dir, shaped like a
// vendor's MIB bundle: module 0 is the vendor's SMI (its enterprise
// subtree), every other imports from it and from SNMPv2-SMI/TC, and has a
// module identity, a textual convention with labels, 20 scalars and two
// tables of 10 columns, each with a description as long as real ones.
func vendorModules(tb testing.TB, dir string, n int) {
	tb.Helper()
	desc := strings.Repeat("The value as the agent reports it, refreshed on every request. ", 3)
	smi := "BENCH-SMI DEFINITIONS ::= BEGIN\nIMPORTS enterprises FROM SNMPv2-SMI;\n" +
		"benchVendor OBJECT IDENTIFIER ::= { enterprises 99990 }\nEND\n"
	if err := os.WriteFile(filepath.Join(dir, "BENCH-SMI.my"), []byte(smi), 0o644); err != nil {
		tb.Fatal(err)
	}
	for i := 1; i < n; i++ {
		var b strings.Builder
		m := fmt.Sprintf("bench%d", i)
		fmt.Fprintf(&b, "BENCH-%d-MIB DEFINITIONS ::= BEGIN\nIMPORTS\n"+
			"    MODULE-IDENTITY, OBJECT-TYPE, Integer32, Counter64, Gauge32 FROM SNMPv2-SMI\n"+
			"    DisplayString, TEXTUAL-CONVENTION FROM SNMPv2-TC\n    benchVendor FROM BENCH-SMI;\n\n", i)
		fmt.Fprintf(&b, "%sMIB MODULE-IDENTITY\n  LAST-UPDATED \"202611250000Z\"\n  ORGANIZATION \"Bench\"\n"+
			"  CONTACT-INFO \"noc@bench.example\"\n  DESCRIPTION \"%s\"\n  ::= { benchVendor %d }\n\n", m, desc, i)
		fmt.Fprintf(&b, "%sState ::= TEXTUAL-CONVENTION\n  STATUS current\n  DESCRIPTION \"%s\"\n"+
			"  SYNTAX INTEGER { ok(1), warning(2), failed(3), absent(4) }\n\n", strings.ToUpper(m[:1])+m[1:], desc)
		fmt.Fprintf(&b, "%sObjects OBJECT IDENTIFIER ::= { %sMIB 1 }\n\n", m, m)
		for s := 1; s <= 20; s++ {
			fmt.Fprintf(&b, "%sScalar%d OBJECT-TYPE\n  SYNTAX Gauge32\n  MAX-ACCESS read-only\n  STATUS current\n"+
				"  DESCRIPTION \"%s\"\n  ::= { %sObjects %d }\n\n", m, s, desc, m, s)
		}
		for tbl := 1; tbl <= 2; tbl++ {
			name := fmt.Sprintf("%sT%d", m, tbl)
			entry := strings.ToUpper(name[:1]) + name[1:] + "Entry"
			fmt.Fprintf(&b, "%sTable OBJECT-TYPE\n  SYNTAX SEQUENCE OF %s\n  MAX-ACCESS not-accessible\n  STATUS current\n"+
				"  DESCRIPTION \"%s\"\n  ::= { %sObjects %d }\n\n", name, entry, desc, m, 20+tbl)
			fmt.Fprintf(&b, "%sEntry OBJECT-TYPE\n  SYNTAX %s\n  MAX-ACCESS not-accessible\n  STATUS current\n"+
				"  DESCRIPTION \"%s\"\n  INDEX { %sIndex }\n  ::= { %sTable 1 }\n\n", name, entry, desc, name, name)
			fmt.Fprintf(&b, "%s ::= SEQUENCE {\n  %sIndex Integer32", entry, name)
			for c := 2; c <= 10; c++ {
				fmt.Fprintf(&b, ",\n  %sCol%d Counter64", name, c)
			}
			b.WriteString("\n}\n\n")
			fmt.Fprintf(&b, "%sIndex OBJECT-TYPE\n  SYNTAX Integer32 (1..65535)\n  MAX-ACCESS not-accessible\n  STATUS current\n"+
				"  DESCRIPTION \"%s\"\n  ::= { %sEntry 1 }\n\n", name, desc, name)
			for c := 2; c <= 10; c++ {
				fmt.Fprintf(&b, "%sCol%d OBJECT-TYPE\n  SYNTAX Counter64\n  MAX-ACCESS read-only\n  STATUS current\n"+
					"  DESCRIPTION \"%s\"\n  ::= { %sEntry %d }\n\n", name, c, desc, name, c)
			}
		}
		b.WriteString("END\n")
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("BENCH-%d-MIB.my", i)), []byte(b.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkLoadMIBDir is the cost at start (and at each SIGHUP) of a
// directory of 100 vendor MIB modules (4,555 objects, 1.6 MB),
// against net-snmp's parser loading the same files in the same run
// (snmptranslate -m ALL, less its run with no module, so the process
// start is not counted), interleaved A-B-B-A. builtin_ms is the built-in
// table alone; unchanged_reload_ms a Load with a LoadCache whose last load
// read the same files (a SIGHUP that changed no MIB file). Run: go test -run '^$' -bench LoadMIBDir -benchtime 5x ./mib/
func BenchmarkLoadMIBDir(b *testing.B) {
	snmptranslate := testenv.LookPath(b, "snmptranslate", "the peer of the benchmark")
	dir := b.TempDir()
	vendorModules(b, dir, 100)
	base, _ := filepath.Abs("base")
	var want int
	loadGosmi := func() time.Duration {
		start := time.Now()
		r, err := Load(Options{Dirs: []string{dir}}, nil, nil)
		d := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		if want == 0 {
			want = r.Len() - Builtin().Len()
		}
		if _, err := r.Resolve("BENCH-99-MIB::bench99T2Col10.1"); err != nil {
			b.Fatal(err)
		}
		return d
	}
	translate := func(modules, name, oid string) time.Duration {
		start := time.Now()
		out, err := exec.Command(snmptranslate, "-M", base+":"+dir, "-m", modules, "-On", name).CombinedOutput()
		d := time.Since(start)
		if err != nil || strings.TrimSpace(string(out)) != oid {
			b.Fatalf("snmptranslate %s: %v: %s", name, err, out)
		}
		return d
	}
	all := func() time.Duration {
		return translate("ALL", "BENCH-99-MIB::bench99T2Col10", ".1.3.6.1.4.1.99990.99.1.22.1.10")
	}
	none := func() time.Duration { return translate("SNMPv2-SMI", "SNMPv2-SMI::enterprises", ".1.3.6.1.4.1") }
	loader := NewLoadCache(nil)
	if _, err := Load(Options{Dirs: []string{dir}}, nil, loader); err != nil {
		b.Fatal(err)
	}
	var gosmiT, netsnmpT, emptyT, builtinT, reloadT time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if _, err := Load(Options{Dirs: []string{dir}}, nil, loader); err != nil {
			b.Fatal(err)
		}
		reloadT += time.Since(start)
		gosmiT += loadGosmi()
		netsnmpT += all()
		emptyT += none()
		emptyT += none()
		netsnmpT += all()
		gosmiT += loadGosmi()
		start = time.Now()
		if _, err := builtinObjects(); err != nil {
			b.Fatal(err)
		}
		builtinT += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(want), "objects")
	b.ReportMetric(gosmiT.Seconds()*1000/(2*n), "gosmi_ms")
	b.ReportMetric((netsnmpT-emptyT).Seconds()*1000/(2*n), "netsnmp_ms")
	b.ReportMetric(builtinT.Seconds()*1000/n, "builtin_ms")
	b.ReportMetric(reloadT.Seconds()*1000/n, "unchanged_reload_ms")
}
