package poller_test

// Tables against real agents: net-snmp's snmpd walks its own IF-MIB and
// HOST-RESOURCES tables (v1, v2c, v3), checked against net-snmp's own
// snmpwalk; snmpsimd serves a data file with non-contiguous indexes and a
// device without HC counters.

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/spool"
)

// snmpwalk returns what net-snmp's snmpwalk finds under a column:
// index → value (strings without their quotes).
func snmpwalk(t *testing.T, port int, column string) map[string]string {
	t.Helper()
	bin := needBinary(t, "snmpwalk")
	out, err := exec.Command(bin, "-v2c", "-c", "public", "-On", "-Oq", "-M", "/dev/null",
		fmt.Sprintf("127.0.0.1:%d", port), column).Output()
	if err != nil {
		t.Fatalf("snmpwalk %s: %v", column, err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		oid, val, _ := strings.Cut(line, " ")
		idx, ok := strings.CutPrefix(oid, "."+column+".")
		if !ok {
			continue // "No Such Instance" and the like
		}
		rows[idx] = strings.Trim(val, `"`)
	}
	return rows
}

// lastEntry returns the newest spooled entry of key.
func lastEntry(t *testing.T, sp *spool.Spool, key string) spool.Entry {
	t.Helper()
	all := spooled(t, sp, key)
	if len(all) == 0 {
		t.Fatalf("no entry of %s", key)
	}
	return all[len(all)-1]
}

func TestSnmpdTables(t *testing.T) {
	port := startSnmpd(t)
	ifNames := snmpwalk(t, port, "1.3.6.1.2.1.31.1.1.1.1")
	storage := snmpwalk(t, port, "1.3.6.1.2.1.25.2.3.1.3")
	if len(ifNames) == 0 || len(storage) == 0 {
		t.Fatalf("snmpwalk found %d interfaces, %d storage rows", len(ifNames), len(storage))
	}
	for _, tc := range []struct{ name, opts string }{
		{"v2c", "community=public"},
		{"v1", "version=1 community=public"},
		{"v3-SHA-AES", fmt.Sprintf("version=3 user=%s auth=SHA auth-pass=%s priv=AES priv-pass=%s", v3User, v3AuthPass, v3PrivPass)},
	} {
		for _, mode := range []poller.TableMode{poller.TableGet, poller.TableBulk} {
			t.Run(tc.name+"-"+string(mode), func(t *testing.T) {
				sp := openSpool(t)
				c := newClock()
				po := pollOptions()
				po.Now, po.TableMode = c.Now, mode
				ts := parseOne(t, fmt.Sprintf("sw 127.0.0.1:%d profile=if-mib %s\nsrv 127.0.0.1:%d profile=host %s", port, tc.opts, port, tc.opts))
				p, err := poller.New(po, ts, sp, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				st := p.Cycle(context.Background())
				if st.OK != 2 || st.Rows != len(ifNames)+len(storage) {
					s, _ := p.Status("sw")
					t.Fatalf("%+v (%d interfaces, %d storage rows): %s %s", st, len(ifNames), len(storage), s.LastError, s.DiscoveryError)
				}
				checkInterfaces(t, sp, port, ifNames)
				for idx, name := range storage {
					e := lastEntry(t, sp, "srv/storage/"+fleet.InstanceSegment(name))
					if len(e.Values) != 3 || e.Values[1].Name != "size" || e.Values[1].Type != spool.Gauge {
						t.Errorf("storage %s (%s): %+v", name, idx, e.Values)
					}
				}
				// The host profile's scalars stay in the target's own file.
				if e := lastEntry(t, sp, "srv"); len(e.Values) != len(fleet.HostProfile().DS) {
					t.Errorf("srv: %d values", len(e.Values))
				}
				if s, _ := p.Status("sw"); s.Rows != len(ifNames) || s.Discoveries != 1 || len(s.GoneRows) != 0 {
					t.Errorf("status %+v", s)
				}
			})
		}
	}
}

// checkInterfaces checks each interface's entry against snmpwalk's view:
// its key is its ifName's, its octet counters are 64-bit and not ahead of
// what the agent says after the poll.
func checkInterfaces(t *testing.T, sp *spool.Spool, port int, ifNames map[string]string) {
	t.Helper()
	after := snmpwalk(t, port, "1.3.6.1.2.1.31.1.1.1.6")
	for idx, name := range ifNames {
		e := lastEntry(t, sp, "sw/"+fleet.InstanceSegment(name))
		if len(e.Values) != 10 || e.Values[0].Name != "in" || e.Values[0].Type != spool.Counter {
			t.Fatalf("%s: %+v", name, e.Values)
		}
		now, err := strconv.ParseUint(after[idx], 10, 64)
		if err != nil || e.Values[0].Counter > now {
			t.Errorf("%s: in %d, agent says %q after", name, e.Values[0].Counter, after[idx])
		}
		if oper := e.Values[9]; oper.Type != spool.Gauge || oper.Gauge < 1 || oper.Gauge > 7 {
			t.Errorf("%s: oper %+v", name, oper)
		}
	}
}

// snmprecRow is one line of an snmpsim data file.
type snmprecRow struct {
	oid, typ, value string
}

// snmprecFile renders rows sorted by OID, as snmpsim wants them.
func snmprecFile(rows []snmprecRow) string {
	slices.SortFunc(rows, func(a, b snmprecRow) int { return compareArcs(a.oid, b.oid) })
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%s|%s|%s\n", r.oid, r.typ, r.value)
	}
	return b.String()
}

func compareArcs(a, b string) int {
	x, y := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(x) && i < len(y); i++ {
		p, _ := strconv.Atoi(x[i])
		q, _ := strconv.Atoi(y[i])
		if p != q {
			return p - q
		}
	}
	return len(x) - len(y)
}

// gearRows is the data of a device with interfaces at non-contiguous
// ifIndexes; with hc, the ifXTable has the 64-bit counters.
func gearRows(indexes []int, hc bool) []snmprecRow {
	rows := []snmprecRow{{"1.3.6.1.2.1.1.3.0", "67", "123456"}}
	for _, i := range indexes {
		ix := strconv.Itoa(i)
		rows = append(rows,
			snmprecRow{"1.3.6.1.2.1.2.2.1.1." + ix, "2", ix},
			snmprecRow{"1.3.6.1.2.1.2.2.1.2." + ix, "4", "Port " + ix},
			snmprecRow{"1.3.6.1.2.1.2.2.1.8." + ix, "2", "1"},
			snmprecRow{"1.3.6.1.2.1.2.2.1.10." + ix, "65", strconv.Itoa(1000 + i%1000)},
			snmprecRow{"1.3.6.1.2.1.2.2.1.16." + ix, "65", strconv.Itoa(2000 + i%1000)},
			snmprecRow{"1.3.6.1.2.1.31.1.1.1.1." + ix, "4", "Gi1/0/" + ix},
		)
		if hc {
			rows = append(rows,
				snmprecRow{"1.3.6.1.2.1.31.1.1.1.6." + ix, "70", strconv.Itoa(5000000000 + i)},
				snmprecRow{"1.3.6.1.2.1.31.1.1.1.10." + ix, "70", strconv.Itoa(6000000000 + i)},
			)
		}
	}
	return rows
}

// TestSnmpsimTables: snmpsimd serves a device numbered 1, 2, 10101...,
// 436207616 and one without HC counters; every interface gets its ifName's
// key, the 64-bit counters where there are some, the 32-bit ones where not.
func TestSnmpsimTables(t *testing.T) {
	gear := []int{1, 2, 10101, 10102, 10148, 436207616}
	old := []int{3, 7, 12}
	port := startSnmpsimFiles(t, map[string]string{
		"gear": snmprecFile(gearRows(gear, true)),
		"old":  snmprecFile(gearRows(old, false)),
	})
	for _, mode := range []poller.TableMode{poller.TableGet, poller.TableBulk} {
		t.Run(string(mode), func(t *testing.T) {
			sp := openSpool(t)
			po := pollOptions()
			po.TableMode = mode
			ts := parseOne(t, fmt.Sprintf("gear 127.0.0.1:%d profile=if-mib community=gear\nold 127.0.0.1:%d profile=if-mib community=old", port, port))
			p, err := poller.New(po, ts, sp, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if st := p.Cycle(context.Background()); st.OK != 2 || st.Rows != len(gear)+len(old) {
				s, _ := p.Status("gear")
				t.Fatalf("%+v: %s %s", st, s.LastError, s.DiscoveryError)
			}
			for dev, idx := range map[string][]int{"gear": gear, "old": old} {
				for _, i := range idx {
					e := lastEntry(t, sp, fleet.RowKey(dev, fleet.InstanceSegment("Gi1/0/"+strconv.Itoa(i))))
					in, out := uint64(5000000000+i), uint64(6000000000+i)
					if dev == "old" {
						in, out = uint64(1000+i%1000), uint64(2000+i%1000)
					}
					if e.Values[0].Counter != in || e.Values[1].Counter != out || e.Values[9].Gauge != 1 {
						t.Errorf("%s ifIndex %d: in %+v out %+v oper %+v, want %d %d 1", dev, i, e.Values[0], e.Values[1], e.Values[9], in, out)
					}
				}
			}
		})
	}
}

// TestSnmpdV3DiscoveryBesideCycles: background discoveries and cycles of
// one v3 device share its engine state (the race detector watches).
func TestSnmpdV3DiscoveryBesideCycles(t *testing.T) {
	port := startSnmpd(t)
	ts := parseOne(t, fmt.Sprintf("sw 127.0.0.1:%d profile=if-mib version=3 user=%s auth=SHA auth-pass=%s priv=AES priv-pass=%s",
		port, v3User, v3AuthPass, v3PrivPass))
	p, err := poller.New(pollOptions(), ts, openSpool(t), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				p.Discover(context.Background(), true)
			}
		}
	}()
	for i := range 5 {
		if st := p.Cycle(context.Background()); st.OK != 1 {
			s, _ := p.Status("sw")
			t.Errorf("cycle %d: %+v %s", i, st, s.LastError)
		}
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second))) // one entry per key and second
	}
	close(stop)
	<-done
	if d := p.DiscoveryStats(); d.Failures != 0 || d.Discoveries < 2 {
		t.Errorf("%+v", d)
	}
}
