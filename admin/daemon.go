package admin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spoold/spoold/graph"
	"github.com/spoold/spoold/internal/confine"
	"github.com/spoold/spoold/loader"
	"github.com/spoold/spoold/poller"
	"github.com/spoold/spoold/rrdwriter"
	"github.com/spoold/spoold/shm"
	"github.com/spoold/spoold/spool"
)

// ErrUnknownTarget is returned by Daemon.Graph for a name that is not a
// configured target; the handler answers 404.
var ErrUnknownTarget = errors.New("unknown target")

// ErrUnknownTemplate is returned by Daemon.GraphTemplate for a template
// name the key's profile does not draw; the handler answers 404.
var ErrUnknownTemplate = errors.New("unknown graph template")

// Daemon is what the admin interface needs of the daemon. Its methods are
// called from the http.Server's goroutines, concurrently, and must be safe
// for that.
type Daemon interface {
	// Status returns a snapshot for /status, /metrics and the page. It is
	// called once per request and should not block on I/O.
	Status() Status
	// Graph flushes target's pending entries and renders its graph. target
	// has passed ValidTargetName; the Daemon returns an error wrapping
	// ErrUnknownTarget unless it is a configured target, and must not turn
	// the name into a path other than through rrd.RRDPath.
	//
	// A key is a target name or a row key "<target>/<instance>" that Rows
	// lists; the handler calls Graph only with keys ValidGraphKey accepts.
	Graph(ctx context.Context, key string, o graph.Options) ([]byte, error)
	// GraphTemplate returns key's graph template of that name (one of
	// TargetStatus.Graphs or RowStatus.Graphs) and the values its title
	// and legends name. It returns an error wrapping ErrUnknownTarget for a
	// key that is neither a configured target nor one of its rows, and
	// ErrUnknownTemplate for a name the key's profile does not draw.
	GraphTemplate(key, name string) (*graph.Template, graph.Vars, error)
	// Rows returns target's table rows (an interface, a disk: each its
	// own RRD file), in the order to show them; nil for a target without
	// tables, an error wrapping ErrUnknownTarget for a name that is not a
	// configured target. It is called once per device page and should not
	// block on I/O.
	Rows(target string) ([]RowStatus, error)
	// FlushAll writes every pending entry now (rrdwriter.Writer.FlushAll).
	// Orphans are no failure of it.
	FlushAll(ctx context.Context) error
	// Orphans returns the keys with entries in the spool that cannot be
	// written: no profile and no RRD file (rrdwriter.Orphans), sorted.
	Orphans() []string
	// SetLoaderParams makes p the running loader's parameters (and those of
	// later rescans). p has passed p.Validate.
	SetLoaderParams(p loader.Params) error
}

// Status is a snapshot of the daemon. The JSON form is documented on
// MarshalJSON (the tags name the members shown as they are); field values
// are exactly what the packages report.
type Status struct {
	Version string    `json:"version"`
	Started time.Time `json:"started"`
	// Now is when the snapshot was taken; zero means the time of the
	// request (Options.Now). Uptime is Now - Started.
	Now time.Time `json:"now"`
	// Settings are the effective flags, name → value, with secrets already
	// removed or masked by the daemon.
	Settings map[string]string `json:"-"`

	Spool spool.Stats `json:"spool"`
	Index shm.Stats   `json:"-"`
	// IndexOverflowed is shm.Index.Overflowed: an Add failed with ErrFull
	// and entries wait on disk for a rescan.
	IndexOverflowed bool         `json:"-"`
	Loader          loader.Stats `json:"-"`
	// LoaderNextRescan is when the next rescan walk starts; zero if none is
	// scheduled.
	LoaderNextRescan time.Time               `json:"-"`
	Writer           rrdwriter.Stats         `json:"writer"`
	WriterErrors     []rrdwriter.TargetError `json:"-"`
	// LastCycle is the last finished poll cycle; nil before the first.
	LastCycle *poller.CycleStats `json:"last_cycle"`
	// Shard is the part of the targets file this instance polls
	// (--shard); its Shard is empty when it polls them all.
	Shard poller.ShardStatus `json:"shard"`
	// PollInterval is the time between cycle starts (for the page).
	PollInterval time.Duration `json:"poll_interval_seconds"`
	// Targets are the configured targets, in the order to show them.
	Targets []TargetStatus `json:"-"`
	// Disk is the sampled disk load and spoold's own I/O.
	Disk DiskStatus `json:"disk"`
	// Landlock is whether the kernel confines the daemon's file access
	// to its directories (--landlock), and the kernel's Landlock ABI.
	Landlock confine.Status `json:"landlock"`
}

// Health is a target's state at a glance.
type Health string

// Health values.
const (
	HealthOK      Health = "ok"      // last poll answered, no write error
	HealthFailing Health = "failing" // last poll failed, or its RRD file cannot be written
	HealthBackoff Health = "backoff" // failing long enough to sit out cycles
	HealthNew     Health = "new"     // not polled yet
)

// healthStates are the values of the spoold_target_health state set.
var healthStates = []Health{HealthOK, HealthFailing, HealthBackoff, HealthNew}

// TargetStatus is one configured target as the page and /status show it.
type TargetStatus struct {
	// DeviceStatus is the poller's view of the target: address, profile,
	// polls and their errors, and its tables' rows.
	poller.DeviceStatus
	Health Health `json:"health"`

	// WriteError is the writer's current error for this target's RRD file
	// (rrdwriter.TargetError.Err) and WriteErrorKind its kind; empty when
	// the last write succeeded.
	WriteError     string `json:"write_error"`
	WriteErrorKind string `json:"write_error_kind"`

	// Attention says in words why the target needs an operator's look
	// whatever its health (rows over its bound on files,
	// DeviceStatus.OverLimitRows; tables without a row,
	// DeviceStatus.EmptyTables); empty when none.
	Attention string `json:"attention"`

	// Graphs are the graph templates of the target's own RRD file (its
	// scalars), in the order to show them; empty: the file's data sources
	// are drawn as lines. TablesOnly says the target has no file of its
	// own (a profile of tables and no scalars, as if-mib): no own graph.
	Graphs     []string `json:"graphs"`
	TablesOnly bool     `json:"tables_only"`
}

// RowStatus is one table row of a target, as the device page shows it.
type RowStatus struct {
	// Key is the row's RRD file key, "<target>/<instance>".
	Key string `json:"key"`
	// Instance is the row's instance name as the device gives it (ifName),
	// Alias its description (ifAlias), both as text to show.
	Instance string `json:"instance"`
	Alias    string `json:"alias"`
	// State is the row's state in a word: "up", "down", "gone" (not found
	// by the last discovery; its file is kept), ...
	State string `json:"state"`
	// Graphs are the row's graph templates, in the order to show them.
	Graphs []string `json:"graphs"`
}

// NewTargetStatus builds a target's status from the poller's view of it and
// the writer's current error for it (nil if none). Health is backoff while
// the device sits out cycles, failing after a failed poll or with a write
// error, new before the first poll, and ok otherwise.
func NewTargetStatus(d poller.DeviceStatus, we *rrdwriter.TargetError) TargetStatus {
	t := TargetStatus{DeviceStatus: d}
	var attention []string
	for _, tb := range d.EmptyTables {
		attention = append(attention, fmt.Sprintf("table %s has no rows: the device answers none of its columns (spoold walk lists them)", tb))
	}
	if d.OverLimitRows > 0 {
		attention = append(attention, fmt.Sprintf("%d table rows not polled: %s", d.OverLimitRows, d.OverLimit))
	}
	t.Attention = strings.Join(attention, "; ")
	if we != nil {
		t.WriteError, t.WriteErrorKind = we.Err, we.Kind.String()
	}
	switch {
	case d.SkipCycles > 0:
		t.Health = HealthBackoff
	case d.ConsecutiveFailures > 0 || d.LastError != "" || we != nil:
		t.Health = HealthFailing
	case d.Polls == 0:
		t.Health = HealthNew
	default:
		t.Health = HealthOK
	}
	return t
}
