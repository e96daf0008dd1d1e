package shm

import (
	"fmt"
	"time"

	"github.com/spoold/spoold/internal/optcheck"
)

// MaxShards is the largest accepted Options.Shards.
const MaxShards = 1 << 16

// Options configure an Index.
type Options struct {
	// Shards is the number of independently locked shards; a power of two
	// from 1 to MaxShards.
	Shards int
	// MaxBytes is the index's capacity in accounted bytes (flag --keys-zone);
	// see Stats.Bytes for what a key and an entry cost. It must be positive.
	MaxBytes int64
	// Now is the clock of the backoff (Done's retry times, Stats.Backoff);
	// nil means time.Now.
	Now func() time.Time
	// MinDelay is the least delay of TakeDue's due function: a key that is
	// ready is never due before its oldest pending time plus MinDelay (the
	// writer's --write-delay). An Add or Done then wakes a sleeping shard
	// only for that time, not at once: at a hundred thousand keys, the
	// keys written and polled anew would otherwise have TakeDue visit
	// every key of their shards after each of them. 0 wakes it at once.
	MinDelay time.Duration
}

// DefaultOptions returns 64 shards, a capacity of 64 MiB and the real clock.
func DefaultOptions() Options {
	return Options{Shards: 64, MaxBytes: 64 << 20}
}

// Validate reports the first bad option, as a *optcheck.FieldError
// naming its field; New calls it.
func (o Options) Validate() error {
	if o.Shards < 1 || o.Shards > MaxShards || o.Shards&(o.Shards-1) != 0 {
		return fmt.Errorf("check shards %d: %w", o.Shards,
			optcheck.Errorf("Shards", fmt.Sprintf("must be a power of two from 1 to %d", MaxShards)))
	}
	if o.MinDelay < 0 {
		return fmt.Errorf("check min delay %v: %w", o.MinDelay, optcheck.Errorf("MinDelay", "must be >= 0"))
	}
	if o.MaxBytes <= 0 {
		return fmt.Errorf("check max bytes %d: %w", o.MaxBytes, optcheck.Errorf("MaxBytes", "must be positive"))
	}
	return nil
}
