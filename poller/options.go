package poller

import (
	"fmt"
	"time"

	"github.com/spoold/spoold/fleet"
	"github.com/spoold/spoold/internal/optcheck"
	"github.com/spoold/spoold/spool"
)

// Options configure a Poller. cmd/spoold maps its --poll-* flags onto them.
type Options struct {
	// Interval is the time between cycle starts (--poll-interval).
	Interval time.Duration
	// Concurrency is the most polls in flight (--poll-concurrency); each
	// holds one UDP socket, or one per lane (at most 8) when a slow
	// device's poll is spread over lanes to fit the cycle (lanes.go).
	Concurrency int
	// Timeout is the wait for one response (--poll-timeout); a target's
	// timeout= overrides it.
	Timeout time.Duration
	// Retries is the resends after a timeout (--poll-retries); a target's
	// retries= overrides it. A device in backoff is probed without retries.
	Retries int
	// CycleTimeout ends a cycle: polls still running are cancelled and
	// devices not yet started are counted as overrun. 0 means 90% of
	// Interval, so a cycle never overruns its interval.
	CycleTimeout time.Duration
	// MaxVarbinds is the most OIDs in one Get; a profile with more is
	// polled with several Gets (--poll-max-varbinds).
	MaxVarbinds int
	// BackoffAfter is the consecutive failures after which a device is
	// skipped in some cycles: after BackoffAfter+k failures in a row it sits
	// out 2^k cycles before the next probe, but is probed at least once per
	// BackoffMax. It is never dropped.
	BackoffAfter int
	// BackoffMax is the longest gap between two probes of a failing device.
	BackoffMax time.Duration
	// Shard is the part of the targets this instance polls (--shard K/N;
	// see Shard); the zero Shard polls them all.
	Shard fleet.Shard
	// MaxRepetitions is the max-repetitions of the GetBulk requests of
	// table walks, at discovery and in bulk polls (--poll-max-repetitions;
	// snmp_exporter's default is 25).
	MaxRepetitions int
	// MaxTableRows bounds the rows discovery keeps of one table
	// (--poll-max-table-rows); a table with more is marked truncated.
	MaxTableRows int
	// TableMode is how discovered rows are polled (--poll-table-mode):
	// TableGet asks for every row's cells in Gets of at most MaxVarbinds,
	// TableBulk walks the table's columns with GetBulk, TableAuto picks,
	// per table, the one of fewer round trips.
	TableMode TableMode
	// RediscoverInterval is the time between discoveries of a device's
	// tables (--rediscover-interval); 0: only at start, after SetTargets
	// (SIGHUP), and when an agent restarts or loses a known row.
	RediscoverInterval time.Duration
	// DiscoveryConcurrency is the most background discoveries in flight
	// while Run runs (each holds one UDP socket).
	DiscoveryConcurrency int
	// MaxFilesPerTarget bounds the row keys (RRD files) of one target,
	// gone ones included (--max-files-per-target; filebound.go).
	MaxFilesPerTarget int
	// NewFilesPerHour bounds the new row keys a target's discoveries after
	// its first may add, per hour, with a burst of as many
	// (--max-new-files-per-hour); 0: no rate bound.
	NewFilesPerHour int
	// DiscoveryTimeout ends a discovery that runs beside the cycles (a
	// first discovery that outlasts its poll, a rediscovery) after this
	// long; 0: none (each request still has Timeout and Retries). A
	// discovery within a cycle ends at the cycle's deadline too.
	DiscoveryTimeout time.Duration
	// Now is the clock of entry times and status times; nil is time.Now.
	// Tests inject the simulator's clock. Timeouts and RTTs use real time.
	Now func() time.Time
	// OnCycle, if set, is called at the end of each cycle of Run.
	OnCycle func(CycleStats)
}

// DefaultOptions returns a 5 minute interval, 256 polls in flight, a 2 s
// timeout with 1 retry, 60 varbinds per Get, and backoff after 2
// consecutive failures up to one probe per 30 minutes; for tables,
// max-repetitions 25, 10,000 rows per table, the poll mode of fewer round
// trips, rediscovery every hour, 32 discoveries in flight and 15 minutes
// at most for one; 20,000 row files per target at most, 100 new ones an
// hour.
func DefaultOptions() Options {
	return Options{
		Interval:     5 * time.Minute,
		Concurrency:  256,
		Timeout:      2 * time.Second,
		Retries:      1,
		MaxVarbinds:  60,
		BackoffAfter: 2,
		BackoffMax:   30 * time.Minute,

		MaxRepetitions:       25,
		MaxTableRows:         10000,
		TableMode:            TableAuto,
		RediscoverInterval:   time.Hour,
		DiscoveryConcurrency: 32,
		DiscoveryTimeout:     15 * time.Minute,
		MaxFilesPerTarget:    20000,
		NewFilesPerHour:      100,
	}
}

// TableMode is how table rows are polled: "auto", "get" or "bulk".
type TableMode string

// Table modes.
const (
	TableAuto TableMode = "auto"
	TableGet  TableMode = "get"
	TableBulk TableMode = "bulk"
)

// ParseTableMode parses auto, get or bulk.
func ParseTableMode(s string) (TableMode, error) {
	switch m := TableMode(s); m {
	case TableAuto, TableGet, TableBulk:
		return m, nil
	}
	return "", fmt.Errorf("parse table mode %q: want auto, get or bulk", s)
}

// Limits of Options, which the flags document; Retries is bounded by
// fleet.MaxRetries, as a target's retries= is.
const (
	// MaxVarbinds is the largest MaxVarbinds: an SNMP Get of 1,000 OIDs
	// already needs a large UDP datagram.
	MaxVarbinds = 1000
	// MaxRepetitions is the largest MaxRepetitions: a GetBulk answer of
	// several columns must still fit one datagram.
	MaxRepetitions = 255
	// MaxTableRows is the largest MaxTableRows.
	MaxTableRows = 1000000
)

// Validate reports the first option out of range, as a
// *optcheck.FieldError naming its field; New calls it.
func (o Options) Validate() error {
	bad := func(field, msg string) error {
		return fmt.Errorf("check poller options: %w", optcheck.Errorf(field, msg))
	}
	switch {
	case o.Interval <= 0:
		return bad("Interval", "must be positive")
	case o.Concurrency < 1:
		return bad("Concurrency", "must be at least 1")
	case o.Timeout <= 0:
		return bad("Timeout", "must be positive")
	case o.Retries < 0 || o.Retries > fleet.MaxRetries:
		return bad("Retries", fmt.Sprintf("must be 0 to %d", fleet.MaxRetries))
	case o.CycleTimeout < 0 || o.CycleTimeout > o.Interval:
		return bad("CycleTimeout", "must be 0 to {Interval}")
	case o.MaxVarbinds < 1 || o.MaxVarbinds > MaxVarbinds:
		return bad("MaxVarbinds", fmt.Sprintf("must be 1 to %d", MaxVarbinds))
	case o.BackoffAfter < 1:
		return bad("BackoffAfter", "must be at least 1")
	case o.Shard.Validate() != nil:
		return bad("Shard", o.Shard.Validate().Error())
	case o.MaxRepetitions < 1 || o.MaxRepetitions > MaxRepetitions:
		return bad("MaxRepetitions", fmt.Sprintf("must be 1 to %d", MaxRepetitions))
	case o.MaxTableRows < 1 || o.MaxTableRows > MaxTableRows:
		return bad("MaxTableRows", fmt.Sprintf("must be 1 to %d", MaxTableRows))
	case o.RediscoverInterval < 0:
		return bad("RediscoverInterval", "must be >= 0")
	case o.DiscoveryConcurrency < 1:
		return bad("DiscoveryConcurrency", "must be at least 1")
	case o.MaxFilesPerTarget < 1:
		return bad("MaxFilesPerTarget", "must be at least 1")
	case o.NewFilesPerHour < 0:
		return bad("NewFilesPerHour", "must be >= 0")
	case o.DiscoveryTimeout < 0:
		return bad("DiscoveryTimeout", "must be >= 0")
	}
	if _, err := ParseTableMode(string(o.TableMode)); err != nil {
		return bad("TableMode", err.Error())
	}
	return nil
}

func (o *Options) cycleTimeout() time.Duration {
	if o.CycleTimeout > 0 {
		return o.CycleTimeout
	}
	return o.Interval - o.Interval/10
}

// SpoolAppender appends entries to the spool: *spool.Spool, appending each
// to its key's open segment. The poller appends through an intake.Intake
// of the SpoolAppender and the Sink, which adds a segment an entry started
// to the Sink. Sync is called once per cycle (the batch fsync policy).
// Append keeps neither the entry nor its values once it returns: the
// poller fills them again for its next entries.
type SpoolAppender interface {
	Append(*spool.Entry) (ref spool.Ref, created bool, err error)
	Sync() error
}

// BatchAppender is a SpoolAppender that is told which appends are one
// device's poll: AppendBatch runs fn, which makes n appends through
// Append, and returns fn's error. The daemon measures the storage I/O of
// each batch once (on its own thread), not of each append.
type BatchAppender interface {
	SpoolAppender
	AppendBatch(n int, fn func() error) error
}

// Sink is the in-memory index of pending entries: *shm.Index. Add's error
// (a full index, typically) is counted in CycleStats.IndexDeferred and
// otherwise ignored: the entry is on disk and a rescan will index it.
type Sink interface {
	Add(hash uint64, key string, ts int64) (bool, error)
}
