package rrd

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Layout says how to create an RRD file: its step, data sources and
// round-robin archives (full rrdcreate RRA: arguments).
type Layout struct {
	Step time.Duration
	DS   []DataSource
	RRAs []string
}

// DSNames returns the names of the layout's data sources, in order.
func (l Layout) DSNames() []string {
	names := make([]string, len(l.DS))
	for i, ds := range l.DS {
		names[i] = ds.Name
	}
	return names
}

// Validate reports whether librrd can create a file from the layout: a
// whole-second step, 1 to 19 character data source names of [A-Za-z0-9_]
// without duplicates, a known type, a heartbeat of at least a second, and
// at least one RRA.
func (l Layout) Validate() error {
	if l.Step < time.Second || l.Step%time.Second != 0 {
		return fmt.Errorf("validate rrd layout: step %s is not a positive whole number of seconds", l.Step)
	}
	if len(l.DS) == 0 || len(l.RRAs) == 0 {
		return errors.New("validate rrd layout: need at least one data source and one RRA")
	}
	seen := make(map[string]bool, len(l.DS))
	for _, ds := range l.DS {
		if err := ds.validate(); err != nil {
			return fmt.Errorf("validate rrd layout: %w", err)
		}
		if seen[ds.Name] {
			return fmt.Errorf("validate rrd layout: data source %q twice", ds.Name)
		}
		seen[ds.Name] = true
	}
	return nil
}

// FileSize estimates the size of l's RRD file: its header and its rows
// (the last field of each RRA definition) of 8-byte values, one per data
// source.
func (l Layout) FileSize() int64 { return FileSizeOf(int64(len(l.DS)), l.RRAs) }

// FileSizeOf estimates the size of an RRD file of ds data sources and the
// RRA definitions rras ("RRA:AVERAGE:0.5:1:600"; the last field is the
// rows).
func FileSizeOf(ds int64, rras []string) int64 {
	var rows int64
	for _, r := range rras {
		if n, err := strconv.ParseInt(r[strings.LastIndexByte(r, ':')+1:], 10, 64); err == nil {
			rows += n
		}
	}
	return rows*ds*valueSize + HeaderLen(ds, int64(len(rras)))
}
