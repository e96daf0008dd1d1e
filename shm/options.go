package shm

import (
	"fmt"
	"time"
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
}

// DefaultOptions returns 64 shards, a capacity of 64 MiB and the real clock.
func DefaultOptions() Options {
	return Options{Shards: 64, MaxBytes: 64 << 20}
}

// validate reports the first bad option by name.
func (o Options) validate() error {
	if o.Shards < 1 || o.Shards > MaxShards || o.Shards&(o.Shards-1) != 0 {
		return fmt.Errorf("check shards %d: must be a power of two from 1 to %d", o.Shards, MaxShards)
	}
	if o.MaxBytes <= 0 {
		return fmt.Errorf("check max bytes %d: must be positive", o.MaxBytes)
	}
	return nil
}
