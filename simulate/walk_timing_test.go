package simulate

import (
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gosnmp/gosnmp"
)

// benchFleet is the fleet of the tables polling benchmark: 2,500 devices of 48
// interfaces with vendor numbering (120,000 rows), some down, a tenth
// without HC counters.
func benchFleet() Options {
	o := gearOptions()
	o.Devices, o.Interfaces = 2500, 48
	o.Down, o.NoHC = 0.1, 0.1
	o.Workers = 0
	return o
}

// walkTables walks a device's ifTable and ifXTable with GetBulk
// (max-repetitions 25, as snmp_exporter) and returns the varbinds read.
func walkTables(tb testing.TB, g *gosnmp.GoSNMP) int {
	n := 0
	for _, root := range []string{oidIfTable, oidIfXTable} {
		err := g.BulkWalk(root, func(gosnmp.SnmpPDU) error { n++; return nil })
		if err != nil {
			tb.Fatal(err)
		}
	}
	return n
}

func benchClient(tb testing.TB, port int, community string) *gosnmp.GoSNMP {
	g := &gosnmp.GoSNMP{Target: "127.0.0.1", Port: uint16(port), Community: community, Version: gosnmp.Version2c,
		Timeout: 5 * time.Second, Retries: 2, MaxRepetitions: 25}
	if err := g.Connect(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { g.Conn.Close() })
	return g
}

// BenchmarkWalk measures table walks as a poller's discovery makes them,
// over UDP on 127.0.0.1 with gosnmp's client: "fleet" walks the ifTable
// and ifXTable of all 2,500 devices (an op is the whole fleet, 32 walks in
// flight); "device" walks one device's tables from the simulator and from
// snmpsimd serving the same values (WriteSnmprec), alternating (an op is
// one walk from each), the peer measured in the same run.
func BenchmarkWalk(b *testing.B) {
	o := benchFleet()
	s := serve(b, o)
	f := s.Fleet()
	b.Run("fleet", func(b *testing.B) {
		const conc = 32
		clients := make([]*gosnmp.GoSNMP, conc)
		for k := range clients {
			clients[k] = benchClient(b, s.Addr().Port, "")
		}
		var varbinds atomic.Int64
		cpu0 := cpuTime(b)
		b.ResetTimer()
		for range b.N {
			next := atomic.Int64{}
			var wg sync.WaitGroup
			for _, g := range clients {
				wg.Go(func() {
					for i := int(next.Add(1) - 1); i < o.Devices; i = int(next.Add(1) - 1) {
						g.Community = f.Name(i)
						varbinds.Add(int64(walkTables(b, g)))
					}
				})
			}
			wg.Wait()
		}
		sec := b.Elapsed().Seconds()
		b.ReportMetric(sec/float64(b.N), "s/fleet")
		// The process's CPU time (simulator and clients): what the walk
		// costs on a machine that other work leaves no core to.
		b.ReportMetric((cpuTime(b)-cpu0).Seconds()/float64(b.N), "cpu_s/fleet")
		b.ReportMetric(float64(b.N*o.Devices)/sec, "devices/s")
		b.ReportMetric(float64(varbinds.Load())/sec, "varbinds/s")
	})
	b.Run("device", func(b *testing.B) {
		agents := [2]*gosnmp.GoSNMP{ // the simulator, snmpsimd
			benchClient(b, s.Addr().Port, f.Name(1)),
			benchClient(b, startSnmpsim(b, f, 1, f.Now()), f.Name(1)),
		}
		var took [2]time.Duration
		n := 0
		b.ResetTimer()
		for op := range b.N {
			for _, k := range [2]int{op % 2, 1 - op%2} { // A-B, B-A...: both share the machine's moods
				start := time.Now()
				n = walkTables(b, agents[k])
				took[k] += time.Since(start)
			}
		}
		b.ReportMetric(float64(n), "varbinds/walk")
		b.ReportMetric(took[0].Seconds()*1000/float64(b.N), "simulator_ms/walk")
		b.ReportMetric(took[1].Seconds()*1000/float64(b.N), "snmpsimd_ms/walk")
	})
}

// BenchmarkRespond measures the simulator's own work for one request,
// decoded request to encoded response, without the socket: a GetBulk of
// 25 repetitions of four interface columns (discovery), and a Get of 60
// instances, six columns of ten interfaces (a poll).
func BenchmarkRespond(b *testing.B) {
	s := &Simulator{fleet: newFleet(benchFleet()), log: slog.New(slog.DiscardHandler)}
	const dev = 7
	g := &gosnmp.GoSNMP{Version: gosnmp.Version2c, Community: s.fleet.Name(dev)}
	var bulk, get []gosnmp.SnmpPDU
	for _, oid := range []string{oidIfInOct, "1.3.6.1.2.1.2.2.1.16", oidIfHCIn, oidIfName} {
		bulk = append(bulk, gosnmp.SnmpPDU{Name: oid, Type: gosnmp.Null})
	}
	for _, ifc := range s.fleet.Interfaces(dev, s.fleet.Now())[:10] {
		for _, col := range []string{oidIfHCIn, "1.3.6.1.2.1.31.1.1.1.10", "1.3.6.1.2.1.31.1.1.1.7", oidIfHCOutUcastPkts, "1.3.6.1.2.1.2.2.1.14", oidIfOperSt} {
			get = append(get, gosnmp.SnmpPDU{Name: col + "." + strconv.Itoa(ifc.Index), Type: gosnmp.Null})
		}
	}
	for _, tc := range []struct {
		name     string
		typ      gosnmp.PDUType
		vbs      []gosnmp.SnmpPDU
		varbinds int
	}{{"getbulk", gosnmp.GetBulkRequest, bulk, 100}, {"get", gosnmp.GetRequest, get, 60}} {
		b.Run(tc.name, func(b *testing.B) {
			req, err := g.SnmpEncodePacket(tc.typ, tc.vbs, 0, 25)
			if err != nil {
				b.Fatal(err)
			}
			dec := &gosnmp.GoSNMP{Version: gosnmp.Version2c}
			b.ReportAllocs()
			for b.Loop() {
				if _, _, ok := s.answer(dec, req); !ok {
					b.Fatal("no answer")
				}
			}
			b.ReportMetric(float64(b.N*tc.varbinds)/b.Elapsed().Seconds(), "varbinds/s")
		})
	}
}

// cpuTime returns the process's user and system CPU time so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
