package poller_test

// Tables of the shapes real agents give (internal/testing/snmpsimtest's
// recordings, served by snmpsimd): no index column, no ifXTable, counters
// only in ifXTable, awkward names, indexes 1 to 4194304; and a table that
// has no row, or loses every row at a rediscovery.

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/internal/testing/snmpsimtest"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/spool"
)

// valuesText renders an entry's values as snmpsimtest.Port.Values does.
func valuesText(vs []spool.Value) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		switch v.Type {
		case spool.Counter:
			out[i] = strconv.FormatUint(v.Counter, 10)
		case spool.Gauge:
			out[i] = strconv.FormatFloat(v.Gauge, 'f', -1, 64)
		default:
			out[i] = "U"
		}
	}
	return out
}

// recordedTargets starts snmpsimd with the recordings names and returns
// it and a targets file polling each with profile, its name the target's.
func recordedTargets(t *testing.T, profile string, names ...string) (*snmpsimtest.Agent, []*fleet.Target) {
	t.Helper()
	files := map[string][]byte{}
	var lines []string
	for _, n := range names {
		files[n] = snmpsimtest.Recording(t, n)
		lines = append(lines, fmt.Sprintf("%s 127.0.0.1:%%d profile=%s community=%s", n, profile, n))
	}
	a := snmpsimtest.Start(t, files)
	text := strings.ReplaceAll(strings.Join(lines, "\n"), "%d", strconv.Itoa(a.Port))
	return a, parseOne(t, text)
}

// TestRecordedAgentsTables: with the if-mib profile, every port of every
// recording is found, keyed by its ifName (ifDescr where it has none), and
// polled with the agent's values (unknown where it answers none), in both
// table modes; the RouterOS agent, which has no ifIndex column, too.
func TestRecordedAgentsTables(t *testing.T) {
	names := snmpsimtest.IfMIBRecordings()
	_, ts := recordedTargets(t, "if-mib", names...)
	for _, mode := range []poller.TableMode{poller.TableGet, poller.TableBulk} {
		t.Run(string(mode), func(t *testing.T) {
			sp := openSpool(t)
			po := pollOptions()
			po.TableMode = mode
			p, err := poller.New(po, ts, sp, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if st := p.Cycle(context.Background()); st.OK != len(names) {
				t.Fatalf("%+v", st)
			}
			for _, n := range names {
				ports := snmpsimtest.IfMIBPorts(n)
				rows, _ := p.Rows(n)
				if len(rows) != len(ports) {
					t.Errorf("%s: %d rows, want %d: %+v", n, len(rows), len(ports), rows)
					continue
				}
				for i, port := range ports {
					key := fleet.RowKey(n, port.Segment)
					if rows[i].Key != key || rows[i].Index != port.Index {
						t.Errorf("%s: row %d is %s (index %s), want %s (index %s)", n, i, rows[i].Key, rows[i].Index, key, port.Index)
						continue
					}
					if got := valuesText(lastEntry(t, sp, key).Values); !slices.Equal(got, port.Values) {
						t.Errorf("%s: %v, want %v", key, got, port.Values)
					}
				}
			}
		})
	}
}

// TestEmptyTableIsNeverSilent: a device that answers but whose table has
// no row is warned of once, when that happens (at its first discovery;
// at the rediscovery where it loses every row), not at each discovery
// after, and its status names the table until it has rows again.
func TestEmptyTableIsNeverSilent(t *testing.T) {
	a, ts := recordedTargets(t, "if-mib", "vanishing", "vanishing-empty")
	var logs logLines
	p, err := poller.New(pollOptions(), ts, openSpool(t), nil, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	warned := func(target string) int {
		n := 0
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "level=WARN") && strings.Contains(l, `msg="table has no rows`) && strings.Contains(l, "target="+target+" ") {
				n++
			}
		}
		return n
	}
	check := func(when string, target string, warnings int, empty []string) {
		t.Helper()
		s, _ := p.Status(target)
		if got := warned(target); got != warnings || !slices.Equal(s.EmptyTables, empty) {
			t.Errorf("%s: %s warned of %d times with empty tables %q, want %d and %q:\n%s", when, target, got, s.EmptyTables, warnings, empty, logs.String())
		}
	}
	if st := p.Cycle(context.Background()); st.OK != 2 || st.Rows != 3 {
		t.Fatalf("first cycle: %+v", st)
	}
	check("first discovery", "vanishing", 0, nil)
	check("first discovery", "vanishing-empty", 1, []string{"if"})

	a.Replace(t, "vanishing", snmpsimtest.Recording(t, "vanishing-empty"))
	for i := range 2 {
		if ok, _ := p.Discover(context.Background(), true); ok != 2 {
			t.Fatalf("rediscovery %d: %d devices discovered, want 2", i, ok)
		}
		check(fmt.Sprintf("rediscovery %d of the emptied table", i), "vanishing", 1, []string{"if"})
		check(fmt.Sprintf("rediscovery %d", i), "vanishing-empty", 1, []string{"if"})
	}
	if s, _ := p.Status("vanishing"); len(s.GoneRows) != 3 {
		t.Errorf("the emptied table's rows are not gone: %+v", s)
	}

	a.Replace(t, "vanishing", snmpsimtest.Recording(t, "vanishing"))
	if ok, _ := p.Discover(context.Background(), true); ok != 2 {
		t.Fatal("no rediscovery")
	}
	check("rows back", "vanishing", 1, nil)
	if !strings.Contains(logs.String(), `msg="table has rows again" target=vanishing table=if rows=3`) {
		t.Errorf("rows back, not logged:\n%s", logs.String())
	}
}
