package rrd

import (
	"fmt"
	"strings"
	"time"
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

// IsRate reports whether values of the type are turned into rates against
// the previous value, so a counter discontinuity would write a spike.
func (t DSType) IsRate() bool { return t == Counter || t == Derive }

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

// Def returns the data source's definition as rrdcreate takes it:
// "DS:<name>:<type>:<heartbeat>:<min>:<max>".
func (ds DataSource) Def() string {
	return fmt.Sprintf("DS:%s:%s:%d:%s:%s", ds.Name, ds.Type, int64(ds.Heartbeat/time.Second), formatLimit(ds.Min), formatLimit(ds.Max))
}
