package main

import (
	"fmt"

	"github.com/spoold/spoold/internal/optcheck"
)

// fieldFlags maps the option fields each package's Validate may name (an
// optcheck.FieldError) to the flags that set them, by part (optionParts),
// so that an error names the flag the operator wrote. Beside each part,
// the fields no flag sets: the daemon leaves them at their defaults or
// sets them in code.
var fieldFlags = map[string]map[string]string{
	"spool": {
		"Dir": "spool-dir", "Levels": "levels",
		"SegmentMaxBytes": "segment-max-bytes", "SegmentMaxEntries": "segment-max-entries",
		"SegmentOpenFiles": "segment-open-files", "MemoryBytes": "segment-memory",
	},
	"index": {"MaxBytes": "keys-zone", "MinDelay": "write-delay"}, // MinDelay: the daemon sets it to --write-delay
	"loader": {
		"loader_files": "loader-files", "loader_sleep": "loader-sleep",
		"loader_threshold": "loader-threshold", "loader_cpu": "loader-cpu",
		"RescanInterval": "rescan-interval",
	},
	"poller": {
		"Interval": "poll-interval", "Concurrency": "poll-concurrency", "Timeout": "poll-timeout",
		"Retries": "poll-retries", "CycleTimeout": "poll-cycle-timeout", "MaxVarbinds": "poll-max-varbinds",
		"Shard": "shard", "MaxRepetitions": "poll-max-repetitions", "MaxTableRows": "poll-max-table-rows",
		"TableMode": "poll-table-mode", "RediscoverInterval": "rediscover-interval",
		"DiscoveryConcurrency": "discovery-concurrency", "DiscoveryTimeout": "discovery-timeout",
		"MaxFilesPerTarget": "max-files-per-target", "NewFilesPerHour": "max-new-files-per-hour",
	},
	"writer": {
		"Dir": "rrd-dir", "FutureTolerance": "future-tolerance", "WriteDelay": "write-delay",
		"WriteJitter": "write-jitter", "Writers": "writers", "WriteRate": "write-rate",
		"BackoffMin": "write-backoff-min", "BackoffMax": "write-backoff-max", "RRDFsync": "rrd-fsync",
		"Forward": "forward", "ForwardTimeout": "forward-timeout", "OpenFiles": "rrd-open-files",
	},
	"protocol": {
		"MaxLine": "rrdcached-max-line", "MaxBatch": "rrdcached-max-batch", "MaxConns": "rrdcached-max-connections",
		"MaxFetchBytes": "rrdcached-max-fetch-bytes", "MaxFetches": "rrdcached-max-fetches",
		"MaxBatchErrorBytes": "rrdcached-max-batch-error-bytes", "IdleTimeout": "rrdcached-idle-timeout",
		"WriteTimeout": "rrdcached-write-timeout", "Listeners": "listen", "Listeners.MaxConns": "listen-max-connections",
	},
}

// fixedFields are the fields of each part that no flag sets.
var fixedFields = map[string][]string{
	"index":    {"Shards"},
	"loader":   {"ProgressEvery"},
	"poller":   {"BackoffAfter"},
	"writer":   {"MaxRetries", "Tick", "RRD"},
	"protocol": {"Dir", "LogInterval", "ShutdownGrace"}, // Dir is --rrd-dir's, checked as the writer's
}

// optionPart is one package's options that the flags set, with its
// Validate.
type optionPart struct {
	name     string
	options  any // a pointer to the options, for tests
	validate func() error
}

// optionParts lists the packages' options in the order check validates
// them.
func (c *config) optionParts() []optionPart {
	return []optionPart{
		{"spool", &c.spool, func() error { return c.spool.Validate() }},
		{"index", &c.index, func() error { return c.index.Validate() }},
		{"loader", &c.loader, func() error { return c.loader.Validate() }},
		{"poller", &c.poller, func() error { return c.poller.Validate() }},
		{"writer", &c.writer, func() error { return c.writer.Validate() }},
		{"protocol", &c.protocol.server, func() error { return c.protocol.serverOptions(c.writer.Dir).Validate() }},
	}
}

// flagError words a part's validation error by the flags: "check
// --poll-cycle-timeout: must be 0 to --poll-interval".
func flagError(part string, err error) error {
	fe := optcheck.As(err)
	flags := fieldFlags[part]
	if fe == nil || flags[fe.Field] == "" {
		return fmt.Errorf("check the %s flags: %w", part, err)
	}
	text := fe.Text(func(field string) string {
		if f := flags[field]; f != "" {
			return "--" + f
		}
		return field
	})
	return fmt.Errorf("check --%s: %s", flags[fe.Field], text)
}
