package main

import (
	"github.com/spoold/spoold/diskstat"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/rrd"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/spool"
)

// meteredSpool is the poller's spool appender with each entry write and each
// end-of-cycle sync measured into a tally; the daemon closes the tally's
// unit at the end of each cycle (poller.Options.OnCycle).
type meteredSpool struct {
	poller.SpoolAppender
	t *diskstat.Tally
}

func (m meteredSpool) Append(e *spool.Entry) (ref spool.Ref, created bool, err error) {
	err = m.t.Measure(1, func() error {
		ref, created, err = m.SpoolAppender.Append(e)
		return err
	})
	return ref, created, err
}

func (m meteredSpool) Sync() error { return m.t.Measure(0, m.SpoolAppender.Sync) }

// meteredRRD is librrd with each update call measured as one unit of a
// tally, its rows the operations.
type meteredRRD struct {
	rrdwriter.RRD
	t *diskstat.Tally
}

func (m meteredRRD) Update(path string, template []string, rows []rrd.Row) error {
	return m.t.MeasureUnit(uint64(len(rows)), func() error { return m.RRD.Update(path, template, rows) })
}
