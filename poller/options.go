package poller

import (
	"errors"
	"fmt"
	"time"

	"github.com/spoold/spoold/spool"
)

// Options configure a Poller. cmd/spoold maps its --poll-* flags onto them.
type Options struct {
	// Interval is the time between cycle starts (--poll-interval).
	Interval time.Duration
	// Concurrency is the most polls in flight (--poll-concurrency); each
	// holds one UDP socket.
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
	Shard Shard
	// Now is the clock of entry times and status times; nil is time.Now.
	// Tests inject the simulator's clock. Timeouts and RTTs use real time.
	Now func() time.Time
	// OnCycle, if set, is called at the end of each cycle of Run.
	OnCycle func(CycleStats)
}

// DefaultOptions returns a 5 minute interval, 256 polls in flight, a 2 s
// timeout with 1 retry, 60 varbinds per Get, and backoff after 2
// consecutive failures up to one probe per 30 minutes.
func DefaultOptions() Options {
	return Options{
		Interval:     5 * time.Minute,
		Concurrency:  256,
		Timeout:      2 * time.Second,
		Retries:      1,
		MaxVarbinds:  60,
		BackoffAfter: 2,
		BackoffMax:   30 * time.Minute,
	}
}

// Limits of Options, which the flags and targets files document.
const (
	// MaxRetries is the most resends after a timeout (Retries, retries=).
	MaxRetries = 10
	// MaxVarbinds is the largest MaxVarbinds: an SNMP Get of 1,000 OIDs
	// already needs a large UDP datagram.
	MaxVarbinds = 1000
)

// Validate reports the first option out of range; New calls it.
func (o Options) Validate() error {
	switch {
	case o.Interval <= 0:
		return errors.New("check poller options: interval must be positive")
	case o.Concurrency < 1:
		return fmt.Errorf("check poller options: concurrency %d, want at least 1", o.Concurrency)
	case o.Timeout <= 0:
		return errors.New("check poller options: timeout must be positive")
	case o.Retries < 0 || o.Retries > MaxRetries:
		return fmt.Errorf("check poller options: retries %d, want 0 to %d", o.Retries, MaxRetries)
	case o.CycleTimeout < 0 || o.CycleTimeout > o.Interval:
		return fmt.Errorf("check poller options: cycle timeout %v not in [0, interval %v]", o.CycleTimeout, o.Interval)
	case o.MaxVarbinds < 1 || o.MaxVarbinds > MaxVarbinds:
		return fmt.Errorf("check poller options: max varbinds %d, want 1 to %d", o.MaxVarbinds, MaxVarbinds)
	case o.BackoffAfter < 1:
		return fmt.Errorf("check poller options: backoff after %d failures, want at least 1", o.BackoffAfter)
	case o.Shard.Validate() != nil:
		return fmt.Errorf("check poller options: %w", o.Shard.Validate())
	}
	return nil
}

func (o *Options) cycleTimeout() time.Duration {
	if o.CycleTimeout > 0 {
		return o.CycleTimeout
	}
	return o.Interval - o.Interval/10
}

// Writer stores entries: *spool.Spool, appending each to its target's
// open segment. created says the entry started a new segment, named ref,
// which the poller then adds to the Sink. Sync is called once per cycle
// (the batch fsync policy).
type Writer interface {
	Append(*spool.Entry) (ref spool.Ref, created bool, err error)
	Sync() error
}

// Sink is the in-memory index of pending entries: *shm.Index. Add's error
// (a full index, typically) is counted in CycleStats.IndexDeferred and
// otherwise ignored: the entry is on disk and a rescan will index it.
type Sink interface {
	Add(hash uint64, key string, ts int64) (bool, error)
}
