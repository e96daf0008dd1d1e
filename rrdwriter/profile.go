package rrdwriter

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// DSType is the type of an RRD data source, as rrdcreate(1) spells it.
type DSType string

// Data source types.
const (
	Counter  DSType = "COUNTER"
	Derive   DSType = "DERIVE"
	Gauge    DSType = "GAUGE"
	Absolute DSType = "ABSOLUTE"
)

// isRate reports whether values of the type are turned into rates against
// the previous value, so a counter discontinuity would write a spike.
func (t DSType) isRate() bool { return t == Counter || t == Derive }

// Integral reports whether values of the type are polled and spooled as
// integers (spool.Counter): every type but GAUGE.
func (t DSType) Integral() bool { return t != Gauge }

// ParseDSType parses a data source type a profile may declare: GAUGE,
// COUNTER, DERIVE or ABSOLUTE, in any case.
func ParseDSType(s string) (DSType, error) {
	for _, t := range []DSType{Gauge, Counter, Derive, Absolute} {
		if strings.EqualFold(s, string(t)) {
			return t, nil
		}
	}
	return "", fmt.Errorf("parse data source type %q: want GAUGE, COUNTER, DERIVE or ABSOLUTE", s)
}

// ValidDSName reports whether s is a valid RRD data source name: 1 to 19
// of [A-Za-z0-9_], as rrdcreate requires.
func ValidDSName(s string) bool {
	if len(s) == 0 || len(s) > 19 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// DataSource is one data source of an RRD file. Min and Max are NaN when
// unknown ("U" in rrdcreate).
type DataSource struct {
	Name      string
	Type      DSType
	Heartbeat time.Duration
	Min, Max  float64
}

// Profile says how to create the RRD file of a target: its step, data
// sources and round-robin archives (full rrdcreate RRA: arguments).
type Profile struct {
	Step time.Duration
	DS   []DataSource
	RRAs []string
}

// DSNames returns the names of the profile's data sources, in order.
func (p Profile) DSNames() []string {
	names := make([]string, len(p.DS))
	for i, ds := range p.DS {
		names[i] = ds.Name
	}
	return names
}

// Validate reports whether librrd can create a file from the profile: a
// whole-second step, 1 to 19 character data source names of [A-Za-z0-9_]
// without duplicates, a known type, a heartbeat of at least a second, and
// at least one RRA.
func (p Profile) Validate() error {
	if p.Step < time.Second || p.Step%time.Second != 0 {
		return fmt.Errorf("validate profile: step %s is not a positive whole number of seconds", p.Step)
	}
	if len(p.DS) == 0 || len(p.RRAs) == 0 {
		return errors.New("validate profile: need at least one data source and one RRA")
	}
	seen := make(map[string]bool, len(p.DS))
	for _, ds := range p.DS {
		if err := ds.validate(); err != nil {
			return fmt.Errorf("validate profile: %w", err)
		}
		if seen[ds.Name] {
			return fmt.Errorf("validate profile: data source %q twice", ds.Name)
		}
		seen[ds.Name] = true
	}
	return nil
}

func (ds DataSource) validate() error {
	if !ValidDSName(ds.Name) {
		return fmt.Errorf("data source name %q is not 1-19 of [A-Za-z0-9_]", ds.Name)
	}
	switch ds.Type {
	case Counter, Derive, Gauge, Absolute:
	default:
		return fmt.Errorf("data source %s has unknown type %q", ds.Name, ds.Type)
	}
	if ds.Heartbeat < time.Second {
		return fmt.Errorf("data source %s has heartbeat %s, under a second", ds.Name, ds.Heartbeat)
	}
	return nil
}

// rraSpans are the resolutions and spans of DefaultRRAs: the classic MRTG
// archives (600 × 5 min, 700 × 30 min, 775 × 2 h, 797 × 1 day).
var rraSpans = []struct{ res, span time.Duration }{
	{5 * time.Minute, 600 * 5 * time.Minute},
	{30 * time.Minute, 700 * 30 * time.Minute},
	{2 * time.Hour, 775 * 2 * time.Hour},
	{24 * time.Hour, 797 * 24 * time.Hour},
}

// DefaultRRAs returns the archives an rrdtool user would pick: AVERAGE and
// MAX at 5 minutes for about 2 days, 30 minutes for about 2 weeks, 2 hours
// for about 2 months and 1 day for about 2 years. A resolution finer than
// step becomes one step per row. For step 300 s that is
// RRA:AVERAGE:0.5:1:600, ...:6:700, ...:24:775, ...:288:797 and the same for
// MAX. A step shorter than 5 minutes adds one AVERAGE RRA at the step's own
// resolution first (at most 4,000 rows). step must be at least a second.
func DefaultRRAs(step time.Duration) []string {
	const maxFineRows = 4000
	if step < time.Second {
		step = time.Second
	}
	var rras []string
	if step < rraSpans[0].res {
		// Polls faster than the finest RRA: keep every step too, for
		// about two days but at most maxFineRows rows (4,000 rows of a
		// 10 s step is 11 hours), so fresh graphs show the raw polls.
		rows := min(int64(rraSpans[0].span/step), maxFineRows)
		rras = append(rras, fmt.Sprintf("RRA:AVERAGE:0.5:1:%d", rows))
	}
	for _, cf := range []string{"AVERAGE", "MAX"} {
		for _, s := range rraSpans {
			pdp := max(int64(s.res/step), 1)
			rows := max(int64(s.span/(time.Duration(pdp)*step)), 1)
			rras = append(rras, fmt.Sprintf("RRA:%s:0.5:%d:%d", cf, pdp, rows))
		}
	}
	return rras
}

// formatLimit formats a Min or Max for rrdcreate: "U" for NaN.
func formatLimit(v float64) string {
	if math.IsNaN(v) {
		return "U"
	}
	return formatFloat(v)
}

// missingAfterCreate is the error for a create librrd reported as done
// though it left no file: with less free space than the file needs it
// wraps ENOSPC (KindNoSpace, backed off until space returns).
func missingAfterCreate(path string, p Profile, statErr error) error {
	if err := noSpace(filepath.Dir(path), p.fileSize()); err != nil {
		return fmt.Errorf("create rrd %s: librrd wrote no file: %w", path, err)
	}
	return fmt.Errorf("create rrd %s: librrd reported success but wrote no file: %w", path, statErr)
}

// noSpaceError says a file system lacks the room a new RRD file needs;
// it wraps ENOSPC.
type noSpaceError struct {
	free, need int64 // bytes; need 0: no free inode
}

func (e *noSpaceError) detail() string {
	if e.need == 0 {
		return "no free inode"
	}
	return fmt.Sprintf("%d bytes free, the file needs about %d", e.free, e.need)
}

func (e *noSpaceError) Error() string { return e.detail() + ": " + unix.ENOSPC.Error() }
func (e *noSpaceError) Unwrap() error { return unix.ENOSPC }

// noSpace returns a *noSpaceError when dir's file system has less than
// need bytes free for spoold, or no free inode; nil when it has room or
// cannot say.
func noSpace(dir string, need int64) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return nil
	}
	switch free := int64(st.Bavail) * st.Bsize; {
	case free < need:
		return &noSpaceError{free: free, need: need}
	case st.Files > 0 && st.Ffree == 0:
		return &noSpaceError{free: free}
	}
	return nil
}

// fileSize estimates the size of p's RRD file: its header and its rows
// (the last field of each RRA definition) of 8-byte values, one per data
// source.
func (p Profile) fileSize() int64 {
	return rrdFileSize(int64(len(p.DS)), p.RRAs)
}

// rrdFileSize estimates the size of an RRD file of ds data sources and the
// RRA definitions rras ("RRA:AVERAGE:0.5:1:600"; the last field is the
// rows).
func rrdFileSize(ds int64, rras []string) int64 {
	var rows int64
	for _, r := range rras {
		if n, err := strconv.ParseInt(r[strings.LastIndexByte(r, ':')+1:], 10, 64); err == nil {
			rows += n
		}
	}
	return rows*ds*rrdValueSize + rrdHeaderLen(ds, int64(len(rras)))
}
