package main

import (
	"github.com/spoold/spoold/diskstat"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdwriter"
)

// meteredSpool is the poller's spool appender with the entry writes of
// each device's poll (poller.BatchAppender) and each end-of-cycle sync
// measured into a tally: one measurement a device, not one an entry, for
// each pins the goroutine to its thread and reads the thread's rusage
// twice. The daemon closes the tally's unit at the end of each cycle
// (poller.Options.OnCycle).
type meteredSpool struct {
	poller.SpoolAppender
	t *diskstat.Tally
}

func (m meteredSpool) AppendBatch(n int, fn func() error) error { return m.t.Measure(uint64(n), fn) }

func (m meteredSpool) Sync() error { return m.t.Measure(0, m.SpoolAppender.Sync) }

// writerRRD returns the writer's RRD as the daemon runs it: with
// --forward none (the writer forwards); else wo.RRD, or LocalRRD beneath an
// rrd.Root on --rrd-dir (made if missing), and native the NativeRRD among
// them (nil without), each update metered into t.
func writerRRD(wo rrdwriter.Options, t *diskstat.Tally) (r rrdwriter.RRD, native *rrdwriter.NativeRRD, err error) {
	if wo.Forward != "" { // forwarded updates do no local disk I/O to meter
		return nil, nil, nil
	}
	if r = wo.RRD; r == nil {
		root, err := rrd.MakeRoot(wo.Dir)
		if err != nil {
			return nil, nil, err
		}
		r = rrdwriter.LocalRRD(root, wo)
		native, _ = r.(*rrdwriter.NativeRRD)
	}
	return meteredRRD{r, t}, native, nil
}

// meteredRRD is librrd with each update call measured as one unit of a
// tally, its rows the operations. It embeds the RRD it meters, and with it
// its Root: the files are opened beneath the RRD directory as unmetered.
type meteredRRD struct {
	rrdwriter.RRD
	t *diskstat.Tally
}

func (m meteredRRD) Update(path string, template []string, rows []rrd.Sample, opened func(fd int)) error {
	return m.t.MeasureUnit(uint64(len(rows)), func() error { return m.RRD.Update(path, template, rows, opened) })
}

// UpdateFor meters the update of an RRD that reads the file's info in its
// update (rrdwriter.NativeRRD) as Update does; of any other it says not
// planned, and the writer reads the info first.
func (m meteredRRD) UpdateFor(path string, rowsFor rrd.RowsFor, opened func(fd int)) (planned bool, err error) {
	fu, ok := m.RRD.(rrdwriter.InfoUpdater)
	if !ok {
		return false, nil
	}
	err = m.t.MeasureUnitOf(func() (uint64, error) {
		var rows int
		planned, err = fu.UpdateFor(path, func(fi rrd.FileInfo) []rrd.Sample {
			r := rowsFor(fi)
			rows = len(r)
			return r
		}, opened)
		return uint64(rows), err
	})
	return planned, err
}
